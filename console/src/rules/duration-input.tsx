/** The units a rule's durations are typed in: ISO 8601 prefix and suffix, and their name. */
export const DURATION_UNITS = [
  ["PT", "H", "hours"],
  ["P", "D", "days"],
  ["P", "W", "weeks"],
  ["P", "M", "months"],
  ["P", "Y", "years"],
] as const;

/** "P30D" → 30 days; anything else the builder did not write shows as days. */
export function durationParts(value: string): { amount: string; unit: number } {
  for (const [i, [prefix, suffix]] of DURATION_UNITS.entries()) {
    const match = new RegExp(`^${prefix}(\\d+)${suffix}$`).exec(value);
    if (match) return { amount: match[1] ?? "", unit: i };
  }
  return { amount: "", unit: 1 };
}

export const durationOf = (amount: string, unit: number) => {
  const [prefix, suffix] = DURATION_UNITS[unit] ?? DURATION_UNITS[1];
  return amount === "" ? "" : `${prefix}${amount}${suffix}`;
};

/** A duration typed as an amount and a unit ("30" "days" → P30D), named "<name> amount" and "<name> unit". */
export function DurationInput(props: {
  name: string;
  value: string;
  described: Record<string, unknown>;
  onChange(duration: string): void;
}) {
  const { name, value, described, onChange } = props;
  const duration = durationParts(value);
  return (
    <>
      <input
        aria-label={`${name} amount`}
        inputMode="numeric"
        size={5}
        value={duration.amount}
        onChange={(event) => onChange(durationOf(event.target.value.trim(), duration.unit))}
        {...described}
      />
      <select
        aria-label={`${name} unit`}
        value={duration.unit}
        onChange={(event) => onChange(durationOf(duration.amount, Number(event.target.value)))}
      >
        {DURATION_UNITS.map(([, , label], i) => (
          <option key={label} value={i}>
            {label}
          </option>
        ))}
      </select>
    </>
  );
}

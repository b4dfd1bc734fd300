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

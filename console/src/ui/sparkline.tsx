/** A small line of sizes over time (oldest first), with its range in the accessible name. */
export function Sparkline({ values, label }: { values: number[]; label: string }) {
  const width = 96;
  const height = 24;
  if (values.length === 0) return <span className="muted">—</span>;
  const min = Math.min(...values);
  const max = Math.max(...values);
  const span = max - min || 1;
  const step = values.length > 1 ? width / (values.length - 1) : 0;
  const points = values
    .map((value, i) => `${(i * step).toFixed(1)},${(height - 2 - ((value - min) / span) * (height - 4)).toFixed(1)}`)
    .join(" ");
  const name = `${label}: from ${values[0]?.toLocaleString()} to ${values.at(-1)?.toLocaleString()}`;
  return (
    <svg
      className="sparkline"
      width={width}
      height={height}
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-label={name}
    >
      <title>{name}</title>
      {values.length > 1 ? (
        <polyline points={points} fill="none" stroke="currentColor" strokeWidth="1.5" />
      ) : (
        <circle cx={width / 2} cy={height / 2} r="2" fill="currentColor" />
      )}
    </svg>
  );
}

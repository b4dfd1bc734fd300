import type { components } from "@audience-service/client";

type Overlap = components["schemas"]["Overlap"];

/** The shade of a share (0 to 1): five steps, as CSS classes (the console's policy allows no inline styles). */
export function shadeOf(share: number): string {
  if (share <= 0) return "shade-0";
  if (share < 0.25) return "shade-1";
  if (share < 0.5) return "shade-2";
  if (share < 0.75) return "shade-3";
  return "shade-4";
}

const percent = (share: number) => `${Math.round(share * 100)}%`;

/**
 * A table with the compared audiences as rows and columns: each cell the members in both (the
 * diagonal, the audience's size) and that count's share of the row's audience, shaded by it. On a
 * narrow screen, where the table would scroll sideways, the same counts as a list of pairs.
 */
export function OverlapHeatmap({
  audiences,
  overlap,
}: {
  audiences: { id: string; name: string }[];
  overlap: Overlap;
}) {
  const size = new Map(overlap.audiences.map((audience) => [audience.id, audience.memberCount]));
  const both = new Map<string, number>();
  for (const pair of overlap.pairs) {
    const [a, b] = pair.audienceIds;
    both.set(`${a} ${b}`, pair.count);
    both.set(`${b} ${a}`, pair.count);
  }
  const count = (row: string, column: string) => (row === column ? size.get(row) : both.get(`${row} ${column}`)) ?? 0;

  return (
    <section aria-labelledby="overlap-result-heading">
      <h2 id="overlap-result-heading">Members in common</h2>
      <p className="all-count">
        In all {audiences.length} audiences: <strong>{overlap.all.toLocaleString()}</strong>
      </p>
      <p className="muted heatmap-note" id="overlap-result-note">
        Each cell: the members in both the row's and the column's audience, and their share of the row's audience.
      </p>
      <div className="table-wrap">
        <table className="heatmap" aria-labelledby="overlap-result-heading" aria-describedby="overlap-result-note">
          <thead>
            <tr>
              <td />
              {audiences.map((column) => (
                <th key={column.id} scope="col">
                  {column.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {audiences.map((row) => {
              const rowSize = size.get(row.id) ?? 0;
              return (
                <tr key={row.id}>
                  <th scope="row">
                    {row.name} <span className="muted">({rowSize.toLocaleString()})</span>
                  </th>
                  {audiences.map((column) => {
                    const value = count(row.id, column.id);
                    const share = rowSize === 0 ? 0 : value / rowSize;
                    return (
                      <td key={column.id} className={`heatmap-cell ${shadeOf(share)}`}>
                        {value.toLocaleString()} <span className="share">({percent(share)})</span>
                      </td>
                    );
                  })}
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <ul className="overlap-pairs" aria-label="Members in common, by pair">
        {audiences.flatMap((row, i) =>
          audiences.slice(i + 1).map((column) => {
            const value = count(row.id, column.id);
            const shares = [row, column].map((a) => {
              const total = size.get(a.id) ?? 0;
              return `${percent(total === 0 ? 0 : value / total)} of ${a.name}`;
            });
            return (
              <li key={`${row.id} ${column.id}`}>
                <strong>
                  {row.name} and {column.name}
                </strong>
                : {value.toLocaleString()} <span className="muted">({shares.join(", ")})</span>
              </li>
            );
          }),
        )}
      </ul>
    </section>
  );
}

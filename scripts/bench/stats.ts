/** Nearest-rank percentile of already sorted samples. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

export interface Summary {
  count: number;
  total: number;
  median: number;
  p99: number;
  min: number;
  max: number;
}

export function summarize(samples: number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    count: sorted.length,
    total: sorted.reduce((sum, x) => sum + x, 0),
    median: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    min: sorted[0] ?? Number.NaN,
    max: sorted.at(-1) ?? Number.NaN,
  };
}

/** Rounds for display and JSON: 3 significant digits below 100, whole numbers above. */
export function round(x: number | null | undefined): number | null {
  if (x === null || x === undefined || !Number.isFinite(x)) return null;
  if (Math.abs(x) >= 100) return Math.round(x);
  return Number(x.toPrecision(3));
}

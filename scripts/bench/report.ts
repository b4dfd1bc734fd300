import { round } from "./stats.ts";

/** One line of the results: a figure of the service beside its raw baseline and target. */
export interface ResultRow {
  scenario: string;
  /** Human label for the table. */
  label: string;
  unit: string;
  /** The service's figure in `unit`. */
  value: number;
  baseline: number | null;
  baselineLabel: string;
  /** value / baseline, when a ratio means something. */
  ratio: number | null;
  target: string;
  /** null: informational. */
  pass: boolean | null;
  medianMs?: number | undefined;
  p99Ms?: number | undefined;
  throughput?: number | undefined;
  baselineMedianMs?: number | undefined;
  baselineP99Ms?: number | undefined;
  serverPeakRssMb?: number | undefined;
  serverCpuS?: number | undefined;
  wallS?: number | undefined;
  note?: string | undefined;
}

const show = (x: number | null | undefined, unit = "") => {
  const r = round(x);
  return r === null ? "–" : `${r.toLocaleString("en-US")}${unit ? ` ${unit}` : ""}`;
};

export function formatTable(rows: ResultRow[], title: string): string {
  const header = ["scenario", "service", "raw baseline", "ratio", "target", "result"];
  const body = rows.map((row) => [
    row.label,
    show(row.value, row.unit),
    row.baseline === null ? "–" : `${show(row.baseline, row.unit)} (${row.baselineLabel})`,
    row.ratio === null ? "–" : `${round(row.ratio)}×`,
    row.target,
    row.pass === null ? "info" : row.pass ? "PASS" : "MISS",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((cells) => (cells[i] as string).length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(" | ")} |`;
  return [
    title,
    line(header),
    `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`,
    ...body.map(line),
    ...rows.filter((row) => row.note).map((row) => `  ${row.label}: ${row.note}`),
  ].join("\n");
}

export function jsonLine(row: ResultRow, context: Record<string, unknown>): string {
  return JSON.stringify({
    scenario: row.scenario,
    ...context,
    unit: row.unit,
    value: round(row.value),
    median_ms: round(row.medianMs),
    p99_ms: round(row.p99Ms),
    throughput: round(row.throughput),
    baseline: round(row.baseline),
    baseline_kind: row.baselineLabel || null,
    baseline_median_ms: round(row.baselineMedianMs),
    baseline_p99_ms: round(row.baselineP99Ms),
    ratio: round(row.ratio),
    target: row.target,
    pass: row.pass,
    server_peak_rss_mb: round(row.serverPeakRssMb),
    server_cpu_s: round(row.serverCpuS),
    wall_s: round(row.wallS),
    ...(row.note ? { note: row.note } : {}),
  });
}

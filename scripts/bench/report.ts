import { round } from "./stats.ts";
import type { TargetKey } from "./targets.ts";

/** One measured row of a scenario: a figure of the service beside its raw baseline. */
export interface ResultRow {
  /** What was measured, stable between runs (page_depth_0, mixed_load, …). */
  metric: string;
  /** Human label for the table. */
  label: string;
  unit: string;
  /** The service's figure in `unit`. */
  value: number;
  baseline: number | null;
  baselineLabel: string;
  /** value / baseline, when a ratio means something. */
  ratio: number | null;
  /** Its target in the table of targets.ts; none: informational. */
  target?: TargetKey | undefined;
  medianMs?: number | undefined;
  p99Ms?: number | undefined;
  throughput?: number | undefined;
  baselineMedianMs?: number | undefined;
  baselineP99Ms?: number | undefined;
  /** Failed requests, for targets that allow none. */
  errors?: number | undefined;
  serverPeakRssMb?: number | undefined;
  serverCpuS?: number | undefined;
  wallS?: number | undefined;
  note?: string | undefined;
}

/** One line of a run's results (JSON lines, see results.ts): a judged row, with its run. */
export interface ResultLine {
  /** The registry's scenario the row comes from (scenarios.ts). */
  scenario: string;
  metric: string;
  label: string;
  value: number | null;
  unit: string;
  baseline: number | null;
  baseline_kind: string | null;
  ratio: number | null;
  target: string;
  target_key: string | null;
  target_kind: string | null;
  pass: boolean | null;
  result: "PASS" | "MISS" | "info";
  median_ms: number | null;
  p99_ms: number | null;
  throughput: number | null;
  baseline_median_ms: number | null;
  baseline_p99_ms: number | null;
  errors: number | null;
  server_peak_rss_mb: number | null;
  server_cpu_s: number | null;
  wall_s: number | null;
  note?: string;
  store: "postgres" | "embedded";
  size: number;
  batch: number;
  quick: boolean;
  commit: string | null;
  run: RunInfo;
}

/** What every line of a run repeats: the build, the machine, its raw limits in this run. */
export interface RunInfo {
  started_at: string;
  describe: string;
  args: string;
  seconds: number;
  load_start: number;
  load_end: number;
  machine: { cpus: number; cpu: string; mem_gib: number; node: string };
  /** How fast this machine was in this run: the baselines runs are compared by. */
  raw_limits: Record<string, number | null>;
}

const show = (x: number | null | undefined, unit = "") => {
  const r = round(x);
  return r === null ? "–" : `${r.toLocaleString("en-US")}${unit ? ` ${unit}` : ""}`;
};

export const TABLE_HEADER = ["scenario", "service", "raw baseline", "ratio", "target", "result"];

/** A result's cells in the table: the same for the terminal and for the rendered docs. */
export function cells(line: ResultLine): string[] {
  return [
    line.label,
    show(line.value, line.unit),
    line.baseline === null ? "–" : `${show(line.baseline, line.unit)} (${line.baseline_kind})`,
    line.ratio === null ? "–" : `${line.ratio}×`,
    line.target,
    line.result,
  ];
}

/** The terminal's table: columns padded to their widest cell. */
export function formatTable(lines: ResultLine[], title: string): string {
  const body = lines.map(cells);
  const widths = TABLE_HEADER.map((h, i) => Math.max(h.length, ...body.map((row) => (row[i] as string).length)));
  const line = (row: string[]) => `| ${row.map((c, i) => c.padEnd(widths[i] as number)).join(" | ")} |`;
  return [
    title,
    line(TABLE_HEADER),
    `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`,
    ...body.map(line),
    ...lines.filter((l) => l.note).map((l) => `  ${l.label}: ${l.note}`),
  ].join("\n");
}

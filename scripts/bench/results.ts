// A run's results as JSON lines: one object per measured row, each carrying its scenario, its
// target and verdict, and the run it belongs to (store, build, machine and the machine's raw
// limits in that run), so that a file of lines is enough to render the docs' tables from.
import { execFileSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import os from "node:os";
import type { ResultLine, ResultRow, RunInfo } from "./report.ts";
import { round } from "./stats.ts";
import { judge, type Store } from "./targets.ts";

/** The raw limits a run is compared by, and the row whose baseline measures each. */
const RAW_LIMITS = {
  bare_route_req_s: "get_audience_throughput",
  unnest_insert_rows_s: "bulk_add_new_ids",
  copy_from_csv_rows_s: "import_csv_new",
  keyset_page_ms: "page_depth_0",
} as const;

/** The build measured: the commit checked out, marked when the work tree differs from it. */
export function buildCommit(): string | null {
  try {
    const run = (args: string[]) => execFileSync("git", args, { encoding: "utf8", stdio: "pipe" }).trim();
    const commit = run(["rev-parse", "--short=12", "HEAD"]);
    return run(["status", "--porcelain", "--untracked-files=no"]) ? `${commit}+dirty` : commit;
  } catch {
    return null;
  }
}

export function machine(): RunInfo["machine"] {
  return {
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model ?? "cpu",
    mem_gib: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
  };
}

export interface RunContext {
  store: Store;
  size: number;
  batch: number;
  quick: boolean;
  commit: string | null;
  run: Omit<RunInfo, "raw_limits">;
}

/** Judges each row against its target and makes its line; rows come with their scenario's name. */
export function toLines(rows: { scenario: string; row: ResultRow }[], context: RunContext): ResultLine[] {
  const byMetric = new Map(rows.map(({ row }) => [row.metric, row]));
  const rawLimits = Object.fromEntries(
    Object.entries(RAW_LIMITS).map(([name, metric]) => [name, round(byMetric.get(metric)?.baseline)]),
  );
  const { run, ...common } = context;
  return rows.map(({ scenario, row }) => {
    const judged = judge(row, context.store);
    return {
      scenario,
      metric: row.metric,
      label: row.label,
      value: round(row.value),
      unit: row.unit,
      baseline: round(row.baseline),
      baseline_kind: row.baselineLabel || null,
      ratio: round(row.ratio),
      target: judged.target,
      target_key: judged.targetKey,
      target_kind: judged.targetKind,
      pass: judged.pass,
      result: judged.pass === null ? "info" : judged.pass ? "PASS" : "MISS",
      median_ms: round(row.medianMs),
      p99_ms: round(row.p99Ms),
      throughput: round(row.throughput),
      baseline_median_ms: round(row.baselineMedianMs),
      baseline_p99_ms: round(row.baselineP99Ms),
      errors: row.errors ?? null,
      server_peak_rss_mb: round(row.serverPeakRssMb),
      server_cpu_s: round(row.serverCpuS),
      wall_s: round(row.wallS),
      ...(row.note ? { note: row.note } : {}),
      ...common,
      run: { ...run, raw_limits: rawLimits },
    };
  });
}

/**
 * The result lines of files written by --out, or of a run's whole output (npm run bench > run.txt):
 * lines that are not JSON objects with a metric (the table, npm's banner) are passed over.
 */
export async function readResults(paths: string[]): Promise<ResultLine[]> {
  const lines: ResultLine[] = [];
  for (const path of paths) {
    const text = path === "-" ? await readStdin() : await readFile(path, "utf8");
    for (const line of text.split("\n")) {
      if (!line.startsWith("{")) continue;
      const parsed = JSON.parse(line) as Partial<ResultLine>;
      if (typeof parsed.metric === "string" && parsed.run) lines.push(parsed as ResultLine);
    }
  }
  return lines;
}

async function readStdin(): Promise<string> {
  let text = "";
  for await (const chunk of process.stdin) text += chunk;
  return text;
}

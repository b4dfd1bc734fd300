import type { ResultRow } from "../report.ts";
import { summarize } from "../stats.ts";

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
export const thousands = (n: number) => n.toLocaleString("en-US");

/** A write-rate row: rows per second of the service's requests against the raw statements'. */
export function rateRow(
  rows: number,
  serviceMs: number[],
  rawMs: number[],
  row: Pick<ResultRow, "scenario" | "label" | "baselineLabel" | "target"> & { minRatio?: number },
): ResultRow {
  const rate = rows / (sum(serviceMs) / 1_000);
  const rawRate = rows / (sum(rawMs) / 1_000);
  const perRequest = summarize(serviceMs);
  const perStatement = summarize(rawMs);
  const { minRatio, ...rest } = row;
  return {
    ...rest,
    unit: "rows/s",
    value: rate,
    baseline: rawRate,
    ratio: rate / rawRate,
    pass: minRatio === undefined ? null : rate / rawRate >= minRatio,
    throughput: rate,
    medianMs: perRequest.median,
    p99Ms: perRequest.p99,
    baselineMedianMs: perStatement.median,
    baselineP99Ms: perStatement.p99,
  };
}

/** A one-off operation's row: its seconds against the raw statements', with a ceiling in seconds. */
export function secondsRow(
  serviceMs: number,
  rawMs: number,
  maxSeconds: number,
  row: Pick<ResultRow, "scenario" | "label" | "baselineLabel">,
): ResultRow {
  return {
    ...row,
    unit: "s",
    value: serviceMs / 1_000,
    baseline: rawMs / 1_000,
    ratio: serviceMs / rawMs,
    target: `≤ ${maxSeconds} s`,
    pass: serviceMs / 1_000 <= maxSeconds,
    medianMs: serviceMs,
  };
}

/** A latency row: the service's p50 beside the raw statement's, with both p99s. */
export function latencyRow(
  serviceMs: number[],
  rawMs: number[],
  row: Pick<ResultRow, "scenario" | "target"> & {
    label: (p99: number) => string;
    pass: (p50: number, p99: number) => boolean | null;
    /** What the raw statement is (default: the keyset query). */
    baseline?: string;
  },
): ResultRow {
  const service = summarize(serviceMs);
  const raw = summarize(rawMs);
  return {
    scenario: row.scenario,
    label: row.label(service.p99),
    unit: "ms",
    value: service.median,
    baseline: raw.median,
    baselineLabel: `${row.baseline ?? "keyset SQL"} p50; p99 ${raw.p99.toFixed(1)} ms`,
    ratio: service.median / raw.median,
    target: row.target,
    pass: row.pass(service.median, service.p99),
    medianMs: service.median,
    p99Ms: service.p99,
    baselineMedianMs: raw.median,
    baselineP99Ms: raw.p99,
  };
}

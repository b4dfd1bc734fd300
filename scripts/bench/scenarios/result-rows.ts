import type { ResultRow } from "../report.ts";
import { summarize } from "../stats.ts";

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
export const thousands = (n: number) => n.toLocaleString("en-US");

/** A write-rate row: rows per second of the service's requests against the raw statements'. */
export function rateRow(
  rows: number,
  serviceMs: number[],
  rawMs: number[],
  row: Pick<ResultRow, "metric" | "label" | "baselineLabel" | "target">,
): ResultRow {
  const rate = rows / (sum(serviceMs) / 1_000);
  const rawRate = rows / (sum(rawMs) / 1_000);
  const perRequest = summarize(serviceMs);
  const perStatement = summarize(rawMs);
  return {
    ...row,
    unit: "rows/s",
    value: rate,
    baseline: rawRate,
    ratio: rate / rawRate,
    throughput: rate,
    medianMs: perRequest.median,
    p99Ms: perRequest.p99,
    baselineMedianMs: perStatement.median,
    baselineP99Ms: perStatement.p99,
  };
}

/** A one-off operation's row: its seconds against the raw statements'. */
export function secondsRow(
  serviceMs: number,
  rawMs: number,
  row: Pick<ResultRow, "metric" | "label" | "baselineLabel" | "target">,
): ResultRow {
  return {
    ...row,
    unit: "s",
    value: serviceMs / 1_000,
    baseline: rawMs / 1_000,
    ratio: serviceMs / rawMs,
    medianMs: serviceMs,
  };
}

/** A latency row: the service's p50 beside the raw statement's, with both p99s. */
export function latencyRow(
  serviceMs: number[],
  rawMs: number[],
  row: Pick<ResultRow, "metric" | "target"> & {
    label: (p99: number) => string;
    /** What the raw statement is (default: the keyset query). */
    baseline?: string;
  },
): ResultRow {
  const service = summarize(serviceMs);
  const raw = summarize(rawMs);
  return {
    metric: row.metric,
    label: row.label(service.p99),
    unit: "ms",
    value: service.median,
    baseline: raw.median,
    baselineLabel: `${row.baseline ?? "keyset SQL"} p50; p99 ${raw.p99.toFixed(1)} ms`,
    ratio: service.median / raw.median,
    target: row.target,
    medianMs: service.median,
    p99Ms: service.p99,
    baselineMedianMs: raw.median,
    baselineP99Ms: raw.p99,
  };
}

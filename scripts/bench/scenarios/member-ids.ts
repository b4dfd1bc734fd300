import type { BenchOptions } from "../options.ts";

export const pad = (n: number) => String(n).padStart(7, "0");
/** Member ids of the big audience: m0000000, m0000001, … (lexical order is numeric order). */
export const bigId = (n: number) => `m${pad(n)}`;
export const range = <T>(from: number, to: number, item: (n: number) => T) =>
  Array.from({ length: Math.max(0, to - from) }, (_, i) => item(from + i));

/** The member at `depth` of the big audience, newest first, from bulkAddNew's batch layout. */
export function bigIdAtDepth(opts: BenchOptions, depth: number): string {
  const batches = opts.size / opts.batch;
  const batchIndex = batches - 1 - Math.floor(depth / opts.batch);
  return bigId(batchIndex * opts.batch + (opts.batch - 1 - (depth % opts.batch)));
}

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { PGlite } from "@electric-sql/pglite";
import { dataDirError } from "./data-dir.ts";
import { RECYCLING } from "./embedded-settings.ts";
import { reopenPglite } from "./pglite.ts";

/** What the store and its Prisma adapter (pglite-prisma-adapter) use of a PGlite. */
export type PgliteClient = Pick<PGlite, "query" | "exec" | "transaction" | "close">;

export interface RecyclingOptions {
  /** Opens the same database again (openPglite on the store's directory). */
  reopen: () => Promise<PGlite>;
  /** The memory the bound is about, in bytes: the process's resident set unless a test says. */
  measure?: () => number;
  /** Grown past this since the instance opened: replaced once nothing runs on it. */
  boundBytes: number;
  /** No replacement sooner than this after the last one: growth that is not PGlite's stays. */
  minIntervalMs: number;
  /** The memory is read at most this often (reading it costs tens of microseconds). */
  measureEveryMs: number;
  /** Told after each replacement, with how long the store waited for it. */
  onRecycled?: (waitedMs: number) => void;
  /** Told when an instance could not be opened again (the next statement tries once more). */
  onReopenFailed?: (error: unknown) => void;
}

/**
 * The client the embedded store runs on: on disk, one whose instance is replaced as the process
 * grows (recyclingPglite, with the bounds of embedded-settings.ts unless overridden); in memory,
 * the instance itself, which holds the only copy of the data.
 */
export function storeClient(
  lite: PGlite,
  onDisk: { dataDir: string; dataPath: string } | undefined,
  overrides?: Partial<Omit<RecyclingOptions, "reopen">>,
): PgliteClient {
  if (onDisk === undefined) return lite;
  const { dataDir, dataPath } = onDisk;
  return recyclingPglite(lite, {
    ...RECYCLING,
    ...overrides,
    reopen: () =>
      reopenPglite(dataPath).catch((error: unknown) => {
        throw dataDirError(dataDir, error);
      }),
  });
}

/**
 * PGlite's WebAssembly memory grows with the largest statement it has run (an import's chunk,
 * a rule over millions of members) and never shrinks: only dropping the instance gives it back.
 * This client runs every statement and transaction on one PGlite and, when the process's memory
 * has grown past the bound since that instance opened and no statement or transaction is under
 * way on it, closes it and opens the database again; what arrives meanwhile waits for the new
 * instance. A transaction holds the instance until it ends (PGlite's own queries wait for an open
 * transaction, so nothing runs beside one). Only a store on disk is replaced: an in-memory one
 * would lose its data.
 */
export function recyclingPglite(first: PGlite, options: RecyclingOptions): PgliteClient {
  const { reopen, boundBytes, minIntervalMs, measureEveryMs } = options;
  const measure = options.measure ?? (() => process.memoryUsage.rss());
  let current: PGlite | undefined = first;
  let baseline = measure();
  let lastReplaced = Date.now();
  let lastMeasured = 0;
  let running = 0;
  let replacing: Promise<void> | undefined;
  let closed = false;

  // Held only for the time of a replacement: what waits for it waits for the new instance.
  const replaceWith = (work: () => Promise<void>) => {
    const started = performance.now();
    replacing = work().finally(() => {
      replacing = undefined;
      lastReplaced = Date.now();
      options.onRecycled?.(performance.now() - started);
    });
  };

  async function enter(): Promise<PGlite> {
    for (;;) {
      if (closed) throw new Error("PGlite is closed");
      if (replacing) {
        await replacing;
        continue;
      }
      if (current === undefined) {
        // The last reopening failed: this statement tries again, and fails with it if it fails.
        const opening = open();
        replacing = opening.then(
          () => undefined,
          () => undefined,
        );
        await opening.finally(() => {
          replacing = undefined;
        });
        continue;
      }
      running++;
      return current;
    }
  }

  async function open(): Promise<void> {
    try {
      current = await reopen();
      collectGarbage();
      baseline = measure();
    } catch (error) {
      options.onReopenFailed?.(error);
      throw error;
    }
  }

  function leave(): void {
    running--;
    if (running > 0 || closed || current === undefined) return;
    const now = Date.now();
    if (now - lastReplaced < minIntervalMs || now - lastMeasured < measureEveryMs) return;
    lastMeasured = now;
    if (measure() - baseline <= boundBytes) return;
    let old: PGlite | undefined = current;
    current = undefined;
    replaceWith(async () => {
      // Closing checkpoints (PGlite shuts PostgreSQL down), so the new instance has nothing to replay.
      await old?.close().catch(() => {});
      // The instance's memory is freed when its WebAssembly.Memory is collected, which no
      // reference may hold back: otherwise the old and the new instance are resident at once.
      old = undefined;
      collectGarbage();
      await open().catch(() => {});
    });
  }

  async function run<T>(fn: (lite: PGlite) => Promise<T>): Promise<T> {
    const lite = await enter();
    try {
      return await fn(lite);
    } finally {
      leave();
    }
  }

  return {
    query: (sql, params, queryOptions) => run((lite) => lite.query(sql, params, queryOptions)),
    exec: (sql, execOptions) => run((lite) => lite.exec(sql, execOptions)),
    transaction: (callback) => run((lite) => lite.transaction(callback)),
    async close() {
      while (replacing) await replacing;
      closed = true;
      await current?.close();
    },
  } as PgliteClient;
}

let gc: (() => void) | undefined;

/**
 * A full garbage collection, so that a dropped instance's memory goes back to the system now
 * rather than whenever V8 next collects its old generation (which a quiet server may not do for
 * a long time). Where V8 does not expose it, the collection comes later by itself.
 */
function collectGarbage(): void {
  gc ??= exposedGc();
  gc?.();
}

function exposedGc(): (() => void) | undefined {
  try {
    setFlagsFromString("--expose-gc");
    const found: unknown = runInNewContext("gc");
    return typeof found === "function" ? (found as () => void) : undefined;
  } catch {
    return undefined;
  }
}

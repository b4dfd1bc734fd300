import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance } from "fastify";
import type { PrismaClient } from "../../generated/prisma/client.ts";
import { AppError } from "../domain/errors.ts";
import type { Store } from "../store/database.ts";

export interface RateLimitOptions {
  /** Requests per API key per window; 0 turns rate limiting off. */
  max: number;
  windowMs: number;
}

/**
 * Rate limiting per API key (@fastify/rate-limit), after authentication so the key is known.
 * Answers carry RateLimit-Limit/Remaining/Reset; an exceeded limit is 429 rate_limited with
 * Retry-After. On PostgreSQL the counts are shared by every server process through the database.
 */
export async function registerRateLimit(app: FastifyInstance, store: Store, options: RateLimitOptions): Promise<void> {
  if (options.max <= 0) return;
  const shared = store.kind === "postgres" ? databaseStore(store.db) : undefined;
  // Counts not yet added to the database are added before the store closes.
  if (shared) app.addHook("onClose", () => shared.close());
  await app.register(rateLimit, {
    global: true,
    hook: "preHandler",
    max: options.max,
    timeWindow: options.windowMs,
    enableDraftSpec: true,
    // Only requests made with an API key are limited: probes and admin operations are not.
    allowList: (request) => !request.principal || request.principal.keyId === "admin",
    keyGenerator: (request) => `${request.principal?.workspaceId}\u0000${request.principal?.keyId}`,
    ...(shared ? { store: shared.Store } : {}),
    errorResponseBuilder: (_request, context) =>
      new AppError(
        429,
        "rate_limited",
        "Too many requests",
        `This API key sent more than ${context.max} requests in ${context.after}; retry in ${Math.ceil(context.ttl / 1000)} seconds.`,
      ),
  });
}

type Callback = (error: Error | null, result?: { current: number; ttl: number }) => void;

/** How often a process adds its counts to the shared ones (and learns the others'). */
const FLUSH_MS = 100;

/**
 * Fixed-window counts per API key, shared by every process through the rate_limit_buckets table.
 * A request is counted in memory (no database round trip on the request's path); every FLUSH_MS
 * the process adds what it counted to the shared rows in one statement for all keys, and reads
 * back the totals, which include the other processes' requests. So a process is exact about its
 * own requests and learns of the others' within FLUSH_MS.
 */
function databaseStore(db: PrismaClient) {
  // shared: the total as of the last flush; inFlight: counted and being added; pending: counted since.
  const counts = new Map<string, { windowStart: number; shared: number; inFlight: number; pending: number }>();
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();
  let closed = false;

  const schedule = () => {
    if (timer || closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      flushing = flushing.then(flush);
    }, FLUSH_MS);
    timer.unref();
  };

  async function flush(): Promise<void> {
    const current = Date.now();
    const batch: { key: string; windowStart: number; count: number }[] = [];
    for (const [key, entry] of counts) {
      if (entry.pending > 0) {
        batch.push({ key, windowStart: entry.windowStart, count: entry.pending });
        entry.inFlight += entry.pending;
        entry.pending = 0;
      } else if (entry.windowStart + 3_600_000 < current) {
        counts.delete(key); // idle for an hour
      }
    }
    if (batch.length === 0) return;
    const [workspaceIds, keyIds] = [0, 1].map((part) => batch.map((b) => b.key.split("\u0000")[part] ?? ""));
    try {
      const rows = await db.$queryRaw<{ workspaceId: string; keyId: string; windowStart: Date; count: number }[]>`
        INSERT INTO rate_limit_buckets (workspace_id, key_id, window_start, count)
        SELECT * FROM unnest(${workspaceIds}::text[], ${keyIds}::text[],
                             ${batch.map((b) => new Date(b.windowStart).toISOString())}::timestamptz[],
                             ${batch.map((b) => b.count)}::int[])
        ON CONFLICT (workspace_id, key_id) DO UPDATE SET
          count = CASE WHEN rate_limit_buckets.window_start = EXCLUDED.window_start
                       THEN rate_limit_buckets.count + EXCLUDED.count ELSE EXCLUDED.count END,
          window_start = EXCLUDED.window_start
        RETURNING workspace_id AS "workspaceId", key_id AS "keyId", window_start AS "windowStart", count`;
      const totals = new Map(rows.map((row) => [`${row.workspaceId}\u0000${row.keyId}`, row]));
      for (const b of batch) {
        const entry = counts.get(b.key);
        if (!entry || entry.windowStart !== b.windowStart) continue;
        entry.inFlight -= b.count;
        // The shared total now includes what was in flight.
        const total = totals.get(b.key);
        if (total && total.windowStart.getTime() === b.windowStart) entry.shared = total.count;
      }
    } catch {
      // The database is unreachable: keep the counts for the next flush; this process still
      // limits on what it has seen.
      for (const b of batch) {
        const entry = counts.get(b.key);
        if (!entry || entry.windowStart !== b.windowStart) continue;
        entry.inFlight -= b.count;
        entry.pending += b.count;
      }
      schedule();
    }
  }

  class DatabaseRateLimitStore {
    incr(key: string, callback: Callback, timeWindow: number): void {
      const now = Date.now();
      const windowStart = now - (now % timeWindow);
      let entry = counts.get(key);
      if (!entry || entry.windowStart !== windowStart) {
        entry = { windowStart, shared: 0, inFlight: 0, pending: 0 };
        counts.set(key, entry);
      }
      entry.pending++;
      schedule();
      callback(null, { current: entry.shared + entry.inFlight + entry.pending, ttl: windowStart + timeWindow - now });
    }

    child() {
      return new DatabaseRateLimitStore();
    }
  }

  return {
    Store: DatabaseRateLimitStore,
    async close(): Promise<void> {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
      await flushing;
      await flush();
    },
  };
}

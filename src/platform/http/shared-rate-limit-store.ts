import type { CountBatch } from "./rate-limit-repo.ts";

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
export function sharedRateLimitStore(addCounts: (batch: CountBatch[]) => Promise<CountBatch[]>) {
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
    try {
      const rows = await addCounts(
        batch.map((b) => {
          const [workspaceId = "", keyId = ""] = b.key.split("\u0000");
          return { workspaceId, keyId, windowStart: new Date(b.windowStart), count: b.count };
        }),
      );
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

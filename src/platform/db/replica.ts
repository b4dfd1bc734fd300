import { PrismaPg } from "@prisma/adapter-pg";
import type { SqlDriverAdapter, SqlQuery, SqlQueryable, SqlResultSet } from "@prisma/driver-adapter-utils";
import { createPool } from "./pg/pg-pools.ts";
import { databaseFault } from "./pg-errors.ts";
import { parseLsn } from "./read-scope.ts";

export interface ReplicaOptions {
  readPoolSize: number;
  exportPoolSize: number;
  connectTimeoutMs: number;
  readTimeoutMs: number;
  probeIntervalMs: number;
  naming: { statementNameGenerator: (query: SqlQuery) => string };
  /** Runs a statement again unnamed when the connections keep no prepared statements (PgBouncer). */
  retrying: (queryable: SqlQueryable) => SqlQueryable;
}

/** Left out, and why: not yet probed, not answering (stopped, frozen, refusing), or no longer a replica. */
export type ReplicaState = "starting" | "up" | "down" | "promoted";

export class ReplicaLeftOut extends Error {
  override name = "ReplicaLeftOut";
}

/**
 * One PostgreSQL streaming replica: its pools (reads and exports, sized as the primary's), and
 * what is known of it: whether it answers, and how far it has replayed the primary's log. A
 * probe connection of its own, with the connect timeout as its limit, tells a frozen replica
 * from a slow statement: reads wait for a replica that answers probes, never for one that
 * answers nothing.
 */
export async function openReplica(url: string, options: ReplicaOptions) {
  const { connectTimeoutMs, readTimeoutMs, naming, probeIntervalMs } = options;
  const name = nameOf(url);
  const pool = (max: number, queryTimeoutMs: number) =>
    createPool({ connectionString: url, max, connectTimeoutMs, queryTimeoutMs });
  const readPool = pool(options.readPoolSize, readTimeoutMs);
  const exportPool = pool(options.exportPoolSize, readTimeoutMs);
  const probes = pool(1, connectTimeoutMs);
  const [readAdapter, exportAdapter] = await Promise.all([
    new PrismaPg(readPool, naming).connect(),
    new PrismaPg(exportPool, naming).connect(),
  ]);
  const adapters = { reads: options.retrying(readAdapter), exports: options.retrying(exportAdapter) };

  let state: ReplicaState = "starting";
  let replayed = 0n;
  let lastAnswerAt = 0;
  // Settled (rejected) when the replica is left out: statements still waiting on it stop waiting.
  let leftOut = signal();
  const waiters = new Set<{ after: bigint; done: (caughtUp: boolean) => void }>();
  let polling = false;

  const answered = (position: bigint | undefined) => {
    lastAnswerAt = Date.now();
    if (position !== undefined && position > replayed) replayed = position;
    for (const waiter of waiters) if (replayed >= waiter.after) waiter.done(true);
  };
  const leave = (next: "down" | "promoted") => {
    if (state === next) return;
    const wasUp = state === "up";
    state = next;
    if (wasUp) leftOut.reject(new ReplicaLeftOut(`the replica ${name} is ${next}`));
    for (const waiter of waiters) waiter.done(false);
  };
  const replayedNow = async () => {
    const { rows } = await probes.query<{ recovering: boolean; replayed: string | null }>(
      "SELECT pg_is_in_recovery() AS recovering, pg_last_wal_replay_lsn()::text AS replayed",
    );
    const row = rows[0];
    return row?.recovering ? parseLsn(row.replayed ?? "0/0") : undefined;
  };

  // Polls the replay position while reads wait for it, one poll at a time for all of them.
  async function pollReplay(): Promise<void> {
    if (polling) return;
    polling = true;
    try {
      while (waiters.size > 0 && state === "up") {
        try {
          const position = await replayedNow();
          if (position === undefined) leave("promoted");
          else answered(position);
        } catch {
          leave("down");
        }
        // A replica replays a commit within a fraction of a millisecond of it, and a read waits
        // for that: the next poll goes out at once (setImmediate lets the process's other work
        // run between polls). A timer's 1 ms, the shortest Node has, added more than the replay.
        if (waiters.size > 0) await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      polling = false;
    }
  }

  return {
    name,
    get state() {
      return state;
    },
    /** The last replay position learned (by a probe, or while a read waited). */
    get replayed() {
      return replayed;
    },

    /** Asks the replica where its replay stands; leaves it out when it does not answer or is promoted. */
    async probe(): Promise<void> {
      try {
        const position = await replayedNow();
        if (position === undefined) return leave("promoted");
        // What it replayed is what it says now, even when that is less than before: a replica
        // restarted between two probes may have lost what it had replayed.
        replayed = position;
        if (state !== "up") {
          state = "up";
          leftOut = signal();
        }
        answered(position);
      } catch {
        leave("down");
      }
    },

    /** Whether the replica replays `after` within waitMs (at once when it already has). */
    caughtUp(after: bigint, waitMs: number): Promise<boolean> {
      if (state !== "up") return Promise.resolve(false);
      if (replayed >= after) return Promise.resolve(true);
      if (waitMs <= 0) return Promise.resolve(false);
      return new Promise((resolve) => {
        const waiter = {
          after,
          done: (caughtUp: boolean) => {
            clearTimeout(timer);
            waiters.delete(waiter);
            resolve(caughtUp);
          },
        };
        const timer = setTimeout(() => waiter.done(false), waitMs);
        waiters.add(waiter);
        void pollReplay();
      });
    },

    /**
     * Runs a read on the replica. It fails (and the caller reads the primary instead) when the
     * replica is left out meanwhile, or has answered nothing, not even a probe, for the connect
     * timeout: a frozen replica holds no read longer than that.
     */
    async query(side: keyof typeof adapters, query: SqlQuery): Promise<SqlResultSet> {
      const statement = adapters[side].queryRaw(query);
      // Abandoned when the replica is left out: its failure, later, concerns nobody.
      statement.catch(() => {});
      let timer: NodeJS.Timeout | undefined;
      const silent = new Promise<never>((_, reject) => {
        const check = () => {
          if (Date.now() - lastAnswerAt < connectTimeoutMs) {
            timer = setTimeout(check, probeIntervalMs);
            return;
          }
          leave("down");
          reject(new ReplicaLeftOut(`the replica ${name} answered nothing for ${connectTimeoutMs} ms`));
        };
        timer = setTimeout(check, connectTimeoutMs);
      });
      silent.catch(() => {});
      try {
        const result = await Promise.race([statement, leftOut.promise, silent]);
        answered(undefined);
        return result;
      } catch (error) {
        if (databaseFault(error) === "unavailable") leave("down");
        throw error;
      } finally {
        clearTimeout(timer);
      }
    },

    async close(): Promise<void> {
      for (const waiter of waiters) waiter.done(false);
      await Promise.all([
        (readAdapter as SqlDriverAdapter).dispose(),
        (exportAdapter as SqlDriverAdapter).dispose(),
        readPool.end(),
        exportPool.end(),
        probes.end(),
      ]);
    },
  };
}

export type Replica = Awaited<ReturnType<typeof openReplica>>;

/** A promise rejected once, to wake whoever races it; never an unhandled rejection. */
function signal() {
  let reject: (error: Error) => void = () => {};
  const promise = new Promise<never>((_, r) => {
    reject = r;
  });
  promise.catch(() => {});
  return { promise, reject };
}

/** The replica as metrics and logs name it: host, port and database, never its credentials. */
function nameOf(url: string): string {
  try {
    const { hostname, port, pathname } = new URL(url);
    return `${hostname}:${port || "5432"}${pathname}`;
  } catch {
    return "replica";
  }
}

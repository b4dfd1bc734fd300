import type { SqlQuery, SqlQueryable, SqlResultSet } from "@prisma/driver-adapter-utils";
import { CONFIGURATION } from "../../config/configuration.ts";
import { databaseReads, replicaFallbacks, trackReplicas } from "../metrics.ts";
import { databaseFault } from "./pg-errors.ts";
import { currentReadScope, parseLsn, type ReadScope } from "./read-scope.ts";
import { openReplica, type Replica, ReplicaLeftOut, type ReplicaOptions } from "./replica.ts";
import type { SqlClient } from "./sql-client.ts";
import type { StoreOptions } from "./store-options.ts";

export interface ReplicaReadsOptions extends ReplicaOptions {
  urls: string[];
  /** A read with a Consistency-Token waits this long for a replica to replay it. */
  waitMs: number;
  /** Without a token, a replica further behind than this is not read from. */
  maxLagMs: number;
  /** The primary's current log position. */
  primaryPosition: () => Promise<bigint>;
}

export interface ReplicaReads {
  /** `primary`'s statements, those of read scopes sent to a replica when one may answer them. */
  route(primary: SqlQueryable, side: "reads" | "exports"): SqlQueryable;
  /** A write's position was handed to its client as a token: its next read will likely ask for it. */
  expect(position: bigint): void;
  close(): Promise<void>;
}

type Reason = "lag" | "token" | "unavailable" | "failed";

/**
 * Reads on PostgreSQL streaming replicas (DATABASE_READ_URLS). Each statement of a read scope
 * (read-scope.ts) goes where the scope's first statement went: a replica that is up, within
 * maxLagMs of the primary, and, when the client sent a token, has replayed it (waiting up to
 * waitMs for one to); otherwise the primary. A statement that fails on a replica is run again
 * on the primary when the failure was the replica's (a statement the primary would refuse too
fails as it would there), and so is the rest of its request: no client sees a replica's failure.
 *
 * Lag is measured by log position, not by the time since the last commit: every probe notes
 * where the primary is, and a replica's lag is how long ago the primary first stood past the
 * position the replica has replayed (0 when it has replayed all). An idle primary leaves a
 * healthy replica at 0; a replica stuck on an old position grows late however little is written.
 */
export async function openReplicaReads(options: ReplicaReadsOptions): Promise<ReplicaReads> {
  const { waitMs, maxLagMs, probeIntervalMs } = options;
  const replicas = await Promise.all(options.urls.map((url) => openReplica(url, options)));
  const lag = new Map<Replica, number>(replicas.map((replica) => [replica, Number.POSITIVE_INFINITY]));
  // Where the primary stood, and when: kept for long enough to tell a lag beyond maxLagMs.
  const history: { position: bigint; at: number }[] = [];
  const keepMs = maxLagMs + 4 * probeIntervalMs + 1_000;

  // Since when each replica has stood behind, while it stays on the same position: the history
  // is trimmed, and a replica stuck for longer than it keeps must still look as late as it is.
  const behind = new Map<Replica, { replayed: bigint; since: number }>();
  const lagOf = (replica: Replica): number => {
    const newest = history.at(-1);
    if (newest === undefined) return Number.POSITIVE_INFINITY;
    const { replayed } = replica;
    if (replayed >= newest.position) {
      behind.delete(replica);
      return 0;
    }
    const passed = (history.find((sample) => sample.position > replayed) as { at: number }).at;
    const kept = behind.get(replica);
    const since = kept?.replayed === replayed ? Math.min(kept.since, passed) : passed;
    behind.set(replica, { replayed, since });
    return Date.now() - since;
  };

  async function probeAll(): Promise<void> {
    try {
      history.push({ position: await options.primaryPosition(), at: Date.now() });
      while (history.length > 2 && (history[1] as { at: number }).at < Date.now() - keepMs) history.shift();
    } catch {
      // The primary does not answer: the replicas still can, measured against where it last stood.
    }
    await Promise.all(replicas.map((replica) => replica.probe()));
    for (const replica of replicas) {
      lag.set(replica, replica.state === "up" ? lagOf(replica) : Number.POSITIVE_INFINITY);
    }
  }

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let probing = Promise.resolve();
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      probing = probeAll().finally(schedule);
    }, probeIntervalMs);
    timer.unref();
  };
  // Before the first request, each probe bounded by the connect timeout: a replica down at
  // start delays the start by that at most, and is read from once it answers.
  await probeAll();
  schedule();
  const untrack = trackReplicas(() =>
    replicas.map((replica) => ({
      replica: replica.name,
      lagMs: lag.get(replica) ?? Number.POSITIVE_INFINITY,
      available: replica.state === "up",
    })),
  );

  let turn = 0;
  const pick = (candidates: Replica[]) => candidates[turn++ % candidates.length] as Replica;
  const fallBack = (reason: Reason) => {
    replicaFallbacks.inc({ reason });
    return undefined;
  };

  async function choose(scope: ReadScope): Promise<Replica | undefined> {
    const up = replicas.filter((replica) => replica.state === "up");
    if (up.length === 0) return fallBack("unavailable");
    const near = up.filter((replica) => (lag.get(replica) ?? Number.POSITIVE_INFINITY) <= maxLagMs);
    if (near.length === 0) return fallBack("lag");
    const { after } = scope;
    if (after === undefined) return pick(near);
    if (after === null) return fallBack("token");
    const ready = near.filter((replica) => replica.replayed >= after);
    if (ready.length > 0) return pick(ready);
    // The furthest one is the likeliest to get there first.
    const furthest = near.reduce((a, b) => (b.replayed > a.replayed ? b : a));
    return (await furthest.caughtUp(after, waitMs)) ? furthest : fallBack("token");
  }

  async function read(primary: SqlQueryable, side: "reads" | "exports", query: SqlQuery): Promise<SqlResultSet> {
    const scope = currentReadScope();
    if (scope === undefined) return primary.queryRaw(query);
    scope.target ??= choose(scope);
    const replica = (await scope.target) as Replica | undefined;
    if (replica !== undefined) {
      try {
        const result = await replica.query(side, query);
        databaseReads.inc({ target: "replica" });
        return result;
      } catch (error) {
        // A statement the primary would refuse as well (bad input, say) fails as it would there;
        // a fault of the replica (gone, a conflict with its recovery, a timeout) is not the
        // client's: the primary answers this statement and the rest of the request.
        if (!(error instanceof ReplicaLeftOut) && databaseFault(error) === undefined) throw error;
        fallBack("failed");
        scope.target = Promise.resolve(undefined);
      }
    }
    databaseReads.inc({ target: "primary" });
    return primary.queryRaw(query);
  }

  return {
    expect(position) {
      for (const replica of replicas) {
        if (replica.state !== "up" || replica.replayed >= position) continue;
        if ((lag.get(replica) ?? Number.POSITIVE_INFINITY) > maxLagMs) continue;
        // Its replay is followed from now, while the client reads the answer: the read that sends
        // the token back then finds the replica known to have replayed it, most often, and goes
        // there without a poll of its own. At most one poll per replica is out at a time.
        void replica.caughtUp(position, waitMs);
      }
    },
    route: (primary, side) => ({
      provider: primary.provider,
      adapterName: primary.adapterName,
      queryRaw: (query) => read(primary, side, query),
      // Statements that change something are never sent to a replica.
      executeRaw: (query) => primary.executeRaw(query),
    }),
    async close() {
      stopped = true;
      clearTimeout(timer);
      untrack();
      await probing;
      await Promise.all(replicas.map((replica) => replica.close()));
    },
  };
}

export const primaryPosition = async (primary: SqlClient): Promise<bigint> => {
  const [row] = await primary.$queryRaw<{ lsn: string }[]>`SELECT pg_current_wal_lsn()::text AS lsn`;
  return parseLsn(row?.lsn ?? "0/0");
};

/** The replicas of DATABASE_READ_URLS, with pools sized and timed as the primary's; none without. */
export function openReplicas(
  settings: StoreOptions &
    Required<Pick<StoreOptions, "readPoolSize" | "exportPoolSize" | "connectTimeoutMs" | "readTimeoutMs">> &
    Pick<ReplicaOptions, "naming" | "retrying">,
  position: () => Promise<bigint>,
): Promise<ReplicaReads> | undefined {
  if (!settings.readUrls?.length) return undefined;
  return openReplicaReads({
    ...settings,
    urls: settings.readUrls,
    waitMs: settings.replicaWaitMs ?? CONFIGURATION.database.replicaWaitMs.fallback,
    maxLagMs: settings.replicaMaxLagMs ?? CONFIGURATION.database.replicaMaxLagMs.fallback,
    probeIntervalMs: settings.replicaProbeIntervalMs ?? CONFIGURATION.database.replicaProbeIntervalMs.fallback,
    primaryPosition: position,
  });
}

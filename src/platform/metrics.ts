import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/**
 * The process's metrics, all in one registry, served by GET /metrics in Prometheus's text format.
 * A feature that wants to be watched adds its instruments here, registered on `registry`, and
 * counts where its work happens; the route serves whatever this module holds.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: "audience_" });

export const httpRequests = new Counter({
  name: "audience_http_requests_total",
  help: "HTTP requests answered, by contract operation (or route), method and status.",
  labelNames: ["operation", "method", "status"] as const,
  registers: [registry],
});

export const httpDuration = new Histogram({
  name: "audience_http_request_duration_seconds",
  help: "Time from a request's arrival to its answer, by contract operation (or route).",
  labelNames: ["operation"] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

export const transactionRetries = new Counter({
  name: "audience_db_transaction_retries_total",
  help: "Write transactions run again after a serialization failure or deadlock.",
  registers: [registry],
});

export const statisticsChecks = new Counter({
  name: "audience_db_statistics_checks_total",
  help: "Checks of the embedded store for tables changed enough to need new planner statistics.",
  registers: [registry],
});

export const tablesAnalyzed = new Counter({
  name: "audience_db_tables_analyzed_total",
  help: "ANALYZEs the embedded store ran on its own tables (PGlite has no autovacuum), by table.",
  labelNames: ["table"] as const,
  registers: [registry],
});

export const walCheckpoints = new Counter({
  name: "audience_db_checkpoints_total",
  help: "Checkpoints the embedded store ran to keep its write-ahead log bounded (PGlite has no checkpointer), by outcome: done, failed.",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

// The embedded store's data directory, while it is open.
const dataDirs = new Map<object, string>();

new Gauge({
  name: "audience_db_data_dir_bytes",
  help: "Size of the embedded store's data directory (DATA_DIR), in all and of its write-ahead log (part wal), measured at each scrape.",
  labelNames: ["part"] as const,
  registers: [registry],
  async collect() {
    this.reset();
    for (const dir of dataDirs.values()) {
      const [total, wal] = await Promise.all([bytesUnder(dir), bytesUnder(join(dir, "pglite", "pg_wal"))]);
      this.inc({ part: "total" }, total);
      this.inc({ part: "wal" }, wal);
    }
  },
});

/** Bytes of the files under dir; files removed while it counts count as nothing. */
async function bytesUnder(dir: string): Promise<number> {
  const names = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  let total = 0;
  for (const name of names) {
    const info = await stat(join(dir, name)).catch(() => undefined);
    if (info?.isFile()) total += info.size;
  }
  return total;
}

/** Reports dir's size in audience_db_data_dir_bytes until the returned function is called. */
export function trackDataDir(dir: string): () => void {
  const key = {};
  dataDirs.set(key, dir);
  return () => {
    dataDirs.delete(key);
  };
}

export interface PoolStats {
  inUse: number;
  idle: number;
  /** Callers waiting for a connection. */
  waiting: number;
}

// Every open store's pools, by name; a closed store takes its own out.
const pools = new Map<object, { name: string; stats: () => PoolStats }>();

new Gauge({
  name: "audience_db_pool_connections",
  help: "Database connections of each pool (read, write, export) in use and idle, and callers waiting for one.",
  labelNames: ["pool", "state"] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const { name, stats } of pools.values()) {
      const { inUse, idle, waiting } = stats();
      this.inc({ pool: name, state: "in_use" }, inUse);
      this.inc({ pool: name, state: "idle" }, idle);
      this.inc({ pool: name, state: "waiting" }, waiting);
    }
  },
});

/** Reports a pool's connections in audience_db_pool_connections until the returned function is called. */
export function trackPool(name: string, stats: () => PoolStats): () => void {
  const key = {};
  pools.set(key, { name, stats });
  return () => {
    pools.delete(key);
  };
}

export const eventsPublished = new Counter({
  name: "audience_events_published_total",
  help: "Events the relay published to the feed, by type.",
  labelNames: ["type"] as const,
  registers: [registry],
});

export const webhookAttempts = new Counter({
  name: "audience_webhook_attempts_total",
  help: "Webhook delivery attempts, by outcome: succeeded, retry (pending again), failed (given up).",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

export const webhookDuration = new Histogram({
  name: "audience_webhook_attempt_duration_seconds",
  help: "Time from sending a delivery to its answer (or to giving up on one).",
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

export interface WebhookBacklog {
  webhookId: string;
  pending: number;
  failed: number;
}

// Where the webhooks' backlog is read from on a scrape: each open app's store (one in a server;
// an app that closes takes its own out). Apps on one store report the same figures, set once.
const webhookBacklogs = new Set<() => Promise<WebhookBacklog[]>>();

/**
 * Each webhook's deliveries waiting for an attempt (pending) and given up (failed, while kept),
 * read from the database when scraped, so every process reports the same shared figures. One
 * series per webhook and state: a workspace has at most 25 webhooks, so the labels stay few;
 * they are webhook ids only (no URL, no workspace). A scrape that cannot read them reports none.
 */
new Gauge({
  name: "audience_webhook_deliveries",
  help: "Deliveries of each webhook by state: pending (waiting for an attempt) and failed (given up, still kept).",
  labelNames: ["webhook", "state"] as const,
  registers: [registry],
  async collect() {
    this.reset();
    const read = await Promise.all([...webhookBacklogs].map((backlog) => backlog().catch(() => [])));
    for (const { webhookId, pending, failed } of read.flat()) {
      this.set({ webhook: webhookId, state: "pending" }, pending);
      this.set({ webhook: webhookId, state: "failed" }, failed);
    }
  },
});

/** Reports the webhooks' backlog in audience_webhook_deliveries until the returned function is called. */
export function trackWebhookBacklog(read: () => Promise<WebhookBacklog[]>): () => void {
  const own = () => read();
  webhookBacklogs.add(own);
  return () => {
    webhookBacklogs.delete(own);
  };
}

export const importRows = new Counter({
  name: "audience_import_rows_total",
  help:
    "Rows of imported CSV files applied, by outcome: created, merged, unchanged (a member, matched), " +
    "accepted, duplicates, expired (an activity) or rejected.",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

export const databaseReads = new Counter({
  name: "audience_db_reads_total",
  help: "Statements of read requests (pages, lists, counts, previews, insight, exports, the feed), by where they ran: replica or primary (with DATABASE_READ_URLS set).",
  labelNames: ["target"] as const,
  registers: [registry],
});

export const replicaFallbacks = new Counter({
  name: "audience_db_replica_fallbacks_total",
  help: "Reads sent to the primary although replicas are configured, by reason: lag (none within DATABASE_REPLICA_MAX_LAG_MS), token (none replayed the Consistency-Token in time), unavailable (none up: down, refusing, promoted), failed (a replica failed mid-request).",
  labelNames: ["reason"] as const,
  registers: [registry],
});

export interface ReplicaStats {
  replica: string;
  /** Milliseconds behind the primary; Infinity when not known (the replica does not answer). */
  lagMs: number;
  available: boolean;
}

// Every open store's replicas; a closed store takes its own out.
const replicaSets = new Map<object, () => ReplicaStats[]>();

new Gauge({
  name: "audience_db_replica_lag_seconds",
  help: "How far each replica is behind the primary: how long ago the primary was where the replica's replay is now (0 when it has replayed all). Absent while a replica does not answer.",
  labelNames: ["replica"] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const stats of replicaSets.values()) {
      for (const { replica, lagMs } of stats()) if (Number.isFinite(lagMs)) this.set({ replica }, lagMs / 1000);
    }
  },
});

new Gauge({
  name: "audience_db_replica_available",
  help: "Whether each replica is read from (1) or left out (0: down, refusing, promoted, or not yet probed).",
  labelNames: ["replica"] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const stats of replicaSets.values()) {
      for (const { replica, available } of stats()) this.set({ replica }, available ? 1 : 0);
    }
  },
});

/** Reports the replicas' lag and availability until the returned function is called. */
export function trackReplicas(stats: () => ReplicaStats[]): () => void {
  const key = {};
  replicaSets.set(key, stats);
  return () => {
    replicaSets.delete(key);
  };
}

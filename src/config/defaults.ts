/**
 * Every default of the service, in one place: the environment (config.ts) resolves against these,
 * and so do the tests' partial settings (settings.ts). docs/configuration.md lists them; a test
 * checks it against the variables of config.ts.
 */
export const DEFAULTS = {
  server: {
    port: 3000,
    host: "127.0.0.1",
    /** The largest JSON body accepted. */
    bodyLimit: 1_048_576,
    /** How long a client may take to send a request's headers and body; then 408. */
    requestTimeoutMs: 60_000,
    logLevel: "info",
  },
  database: {
    dataDir: "./data",
    /** Connections for write transactions. */
    poolSize: 10,
    /** Connections for reads and single statements. */
    readPoolSize: 5,
    /**
     * Connections for the reads of exports (member files), apart from the others, so that exports
     * can never take the connections pages, writes and background work need; their statements
     * take turns on them.
     */
    exportPoolSize: 2,
    /** Longest statement of a write transaction. */
    statementTimeoutMs: 30_000,
    /** Longest wait for a read's answer. */
    readTimeoutMs: 5_000,
    /** Longest wait for a connection or a turn to write. */
    connectTimeoutMs: 5_000,
    /** Write transactions that may wait for their turn. */
    queueLimit: 50,
    preparedStatements: true,
    /** A read that sends a Consistency-Token waits this long for a replica to replay it, then goes to the primary. */
    replicaWaitMs: 200,
    /** Without a token, a replica further behind the primary than this is not read from. */
    replicaMaxLagMs: 1_000,
  },
  replicas: {
    /**
     * How often each replica's replayed position (and the primary's) is read: the lag is known
     * to within this, and a replica that stopped answering is left out within this plus the
     * connect timeout.
     */
    probeIntervalMs: 250,
  },
  /** Requests per API key per minute; 0 turns rate limiting off. */
  rateLimit: {
    perMinute: 6_000,
    /**
     * Heavy operations (those the contract marks x-heavy: they evaluate over a whole workspace)
     * one API key runs at once in a process; one key cannot take the store from the others.
     */
    heavyPerKey: 2,
  },
  /** How long a read audience is trusted without change reports from other processes. */
  cache: { audienceTtlMs: 5_000 },
  events: { retentionDays: 7 },
  activities: {
    /** How long activities are kept: older ones are purged, and an older one arriving is not stored. */
    retentionDays: 400,
    /** How often the purge runs: drops the months past the retention, creates the months ahead. */
    purgeIntervalMs: 3_600_000,
  },
  rules: {
    /** How often relative-time rules (withinLast) catch up with the clock. */
    timeIntervalSeconds: 60,
    /**
     * The most a filter may cost to evaluate over a workspace (filter-cost.ts), by store: a simple
     * condition on one member costs 1. On PostgreSQL a preview with nodeCounts of a rule of 10
     * simple conditions stays within it up to 1,440,000 members, and a statement past the read
     * timeout is cancelled. The embedded store runs one statement at a time and cannot interrupt
     * it, so every other request waits for the one that runs: its bound keeps the costliest
     * accepted filter near a second of that store's time (10 simple conditions at 250,000 members).
     */
    costBudget: { postgres: 18_000_000, embedded: 2_500_000 },
  },
  webhooks: {
    /** Deliver to loopback and private addresses too (self-hosted receivers, tests). */
    allowPrivate: false,
    /** How long a receiver has to answer. */
    timeoutMs: 10_000,
  },
  imports: {
    /** The largest CSV file accepted (1 GiB); stored as it arrives, not held in memory. */
    maxBytes: 1_073_741_824,
    /** How soon another process takes over a job whose process stopped renewing it. */
    leaseMs: 30_000,
    /**
     * Rows applied per transaction, by store: larger chunks import faster and hold the
     * workspace's member lock longer each (the workspace's other writes wait between chunks).
     */
    chunkRows: { postgres: 10_000, embedded: 5_000 },
    /**
     * Jobs a process runs at once, at most one per workspace: with one, every workspace's file
     * would wait for whichever large one runs.
     */
    workers: 2,
  },
  exports: {
    /**
     * Member numbers an export reads per statement: four chunks' worth, each statement's fixed
     * cost spread over many rows.
     */
    batchSize: 32_768,
    /** Statements an export keeps running ahead of the client, each on a connection of its own. */
    readAhead: 2,
    /**
     * Exports one server process streams at once: their reads and lines cost the process CPU that
     * its other requests wait for.
     */
    concurrency: 2,
    /** Of those, the exports of one API key (one key cannot take them all). */
    perKey: 1,
    /** How long a client may take nothing of its file before it is disconnected. */
    writeTimeoutMs: 30_000,
    /**
     * How long a client may take nothing before its place goes to an export that would otherwise
     * be refused (at most writeTimeoutMs): stalled readers of some keys cannot hold every place.
     */
    stalledAfterMs: 5_000,
  },
} as const;

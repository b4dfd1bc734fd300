import {
  boolean,
  fixed,
  integer,
  oneOf,
  optional,
  type Parser,
  storeDependent,
  text,
  type ValuesOf,
  variable,
} from "./variable.ts";

/**
 * Every setting of the service, declared once: where it sits in the configuration, and for the
 * variables of the environment their name, check, default, section and meaning. config.ts reads
 * the environment against it, settings.ts fills the tests' partial settings from it, and
 * `npm run generate` writes docs/configuration.md's tables and .env.example from it
 * (test/unit/configuration-docs.test.ts fails when they differ).
 */

/** How webhook hosts are resolved, at creation and when connecting (tests substitute a table). */
export type Resolve = (host: string) => Promise<string[]>;

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
const postgresUrl = text({ pattern: "^postgres(ql)?://" });
const postgresUrls: Parser<string[]> = {
  schema: { type: "string", pattern: "^\\s*postgres(ql)?://[^,]+(,\\s*postgres(ql)?://[^,]+)*,?\\s*$" },
  read: (urls) =>
    String(urls)
      .split(",")
      .map((url) => url.trim())
      .filter(Boolean),
};
const token = text({ minLength: 16 });

export const CONFIGURATION = {
  listen: {
    port: variable("PORT", integer(0, 65535), 3000, {
      section: "Server",
      about: "Port to listen on (`0`: any free port).",
    }),
    host: variable("HOST", text({ minLength: 1 }), "127.0.0.1", {
      section: "Server",
      about: "Address to listen on; `0.0.0.0` to accept other machines.",
    }),
  },
  logLevel: variable("LOG_LEVEL", oneOf(LOG_LEVELS), "info", {
    section: "Server",
    about: "`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`. Logs are JSON lines.",
  }),
  database: {
    databaseUrl: optional("DATABASE_URL", postgresUrl, {
      section: "Database",
      about: "`postgresql://…` to use PostgreSQL (directly or through PgBouncer); unset for the embedded store.",
    }),
    listenUrl: optional("DATABASE_LISTEN_URL", postgresUrl, {
      section: "Database",
      shown: "`DATABASE_URL`",
      about:
        "A direct `postgresql://…` connection for `LISTEN`, when `DATABASE_URL` goes through PgBouncer in transaction mode.",
    }),
    dataDir: variable("DATA_DIR", text({ minLength: 1 }), "./data", {
      section: "Database",
      about: "Where the embedded store keeps its files (one server at a time: a second refuses to start).",
    }),
    poolSize: variable("DATABASE_POOL_SIZE", integer(1, 1000), 10, {
      section: "Database",
      about: "Connections for write transactions; as many writes run at once.",
    }),
    readPoolSize: variable("DATABASE_READ_POOL_SIZE", integer(1, 1000), 5, {
      section: "Database",
      about: "Connections for reads and single statements, apart from the writes'.",
    }),
    exportPoolSize: variable("DATABASE_EXPORT_POOL_SIZE", integer(1, 1000), 2, {
      section: "Database",
      about:
        "PostgreSQL connections the reads of exports use, apart from the read and write pools: exports never take the connections pages, writes and background work need. Export statements take turns on them (a statement admitted to an export never fails for waiting). Each process opens up to `DATABASE_POOL_SIZE + DATABASE_READ_POOL_SIZE + DATABASE_EXPORT_POOL_SIZE` connections (+1 for LISTEN): 10 + 5 + 2 + 1 by default.",
    }),
    statementTimeoutMs: variable("DATABASE_STATEMENT_TIMEOUT_MS", integer(100, 86_400_000), 30_000, {
      section: "Database",
      about: "Longest a statement of a write transaction may run (then 503).",
    }),
    readTimeoutMs: variable("DATABASE_READ_TIMEOUT_MS", integer(100, 86_400_000), 5_000, {
      section: "Database",
      about: "Longest a read may wait for its answer (then 503).",
    }),
    connectTimeoutMs: variable("DATABASE_CONNECT_TIMEOUT_MS", integer(100, 600_000), 5_000, {
      section: "Database",
      about: "Longest a request waits for a connection or for its turn to write (then 503).",
    }),
    queueLimit: variable("DATABASE_QUEUE_LIMIT", integer(0, 100_000), 50, {
      section: "Database",
      about: "Write requests that may wait for their turn; one more is refused at once with 503.",
    }),
    // Off saves a pooler that keeps no prepared statements the first failed statement of each
    // process (it is run again unnamed, and naming stops by itself).
    preparedStatements: variable("DATABASE_PREPARED_STATEMENTS", boolean, true, {
      section: "Database",
      about:
        'Prepare statements on PostgreSQL\'s connections; `false` behind a pooler that keeps none (see "Behind PgBouncer").',
    }),
    readUrls: variable("DATABASE_READ_URLS", postgresUrls, [], {
      section: "Replicas",
      about:
        "PostgreSQL streaming replicas, `postgresql://…` separated by commas (directly or through PgBouncer), that answer reads outside write transactions: pages, lists, counts, previews, insight, exports, the event feed. Needs `DATABASE_URL`: the embedded store has no replicas, and the start is refused. See [operations.md](operations.md#reads-on-replicas). Each process opens `DATABASE_READ_POOL_SIZE + DATABASE_EXPORT_POOL_SIZE + 1` connections to each replica.",
    }),
    replicaWaitMs: variable("DATABASE_REPLICA_WAIT_MS", integer(0, 60_000), 200, {
      section: "Replicas",
      about:
        "How long a read that sends a `Consistency-Token` waits for a replica to replay that write; then the primary answers it.",
    }),
    replicaMaxLagMs: variable("DATABASE_REPLICA_MAX_LAG_MS", integer(0, 86_400_000), 1_000, {
      section: "Replicas",
      about:
        "A replica further behind the primary than this (measured by replayed log position) answers no read that sends no token.",
    }),
    /**
     * How often each replica's replayed position (and the primary's) is read: the lag is known to
     * within this, and a replica that stopped answering is left out within this plus the connect
     * timeout.
     */
    replicaProbeIntervalMs: fixed(250),
  },
  settings: {
    http: {
      bodyLimit: variable("BODY_LIMIT", integer(1024, 104_857_600), 1_048_576, {
        section: "Limits",
        about: "Largest request body in bytes (413 `payload_too_large` above it).",
      }),
      /** How long a client may take to send a request's headers and body; then 408. */
      requestTimeoutMs: fixed(60_000),
      publicUrl: optional("PUBLIC_URL", text({ pattern: "^https?://[^\\s]+$" }), {
        section: "Server",
        about:
          '`https://…` where clients reach the API, for the API reference\'s "Try it out"; unset: the server that served the page.',
      }),
      adminToken: optional("ADMIN_TOKEN", token, {
        section: "Server",
        about: "Token for the admin operations, at least 16 characters; unset disables them.",
      }),
      metricsToken: optional("METRICS_TOKEN", token, {
        section: "Server",
        about: "Bearer token `GET /metrics` requires, at least 16 characters; unset: no token.",
      }),
    },
    rateLimit: {
      perMinute: variable("RATE_LIMIT_PER_MINUTE", integer(0, 10_000_000), 6_000, {
        section: "Limits",
        about: "Requests per API key per minute (429 `rate_limited` above it); `0` turns limiting off.",
      }),
      heavyPerKey: variable("HEAVY_CONCURRENCY_PER_KEY", integer(1, 1000), 2, {
        section: "Limits",
        about:
          "Heavy operations (those the contract marks `x-heavy`: previews, dry runs, overlap, setting a rule) one API key runs at once in a server process; one more is refused at once with 429 `too_many_heavy_requests` and `Retry-After`. Each counts as one request for `RATE_LIMIT_PER_MINUTE`, however long it runs.",
      }),
    },
    /** How long a read audience is trusted without change reports from other processes. */
    cache: { audienceTtlMs: fixed(5_000) },
    events: {
      retentionDays: variable("EVENT_RETENTION_DAYS", integer(1, 3650), 7, {
        section: "Rules and events",
        about: "How long the event feed keeps events (and the delivery log its entries).",
      }),
    },
    membershipHistory: {
      days: variable("MEMBERSHIP_HISTORY_DAYS", integer(1, 3650), 400, {
        section: "Rules and events",
        about:
          "How far back (1–3650 days) an audience's members can be asked for at an instant (`asOf`) and who came and went between two (`listAudienceChanges`): older transitions are compacted away, keeping each member's last one while it was still in.",
      }),
    },
    activities: {
      retentionDays: variable("ACTIVITY_RETENTION_DAYS", integer(1, 3650), 400, {
        section: "Rules and events",
        about:
          "How long member activities are kept (1–3650 days): older ones are purged, and an activity older than this arriving is counted `expired` and not stored.",
      }),
      /** How often the purge runs: drops the months past the retention, creates the months ahead. */
      purgeIntervalMs: fixed(3_600_000),
    },
    rules: {
      timeIntervalSeconds: variable("TIME_RULES_INTERVAL_SECONDS", integer(1, 3600), 60, {
        section: "Rules and events",
        about:
          "How often rules with `withinLast` / `notWithinLast` catch up with the clock (1–3600): a member crossing a window's edge enters or leaves within this time.",
      }),
      // By store: on PostgreSQL a preview with nodeCounts of a rule of 10 simple conditions stays
      // within it up to 1,440,000 members, and a statement past the read timeout is cancelled. The
      // embedded store runs one statement at a time and cannot interrupt it: its bound keeps the
      // costliest accepted filter near a second of that store's time (10 simple conditions at
      // 250,000 members).
      costBudget: storeDependent(
        "FILTER_COST_BUDGET",
        integer(0, 1_000_000_000_000),
        { postgres: 18_000_000, embedded: 2_500_000 },
        {
          section: "Limits",
          about:
            "The most a filter may cost to evaluate over a workspace, in simple conditions times members (see [rules.md](rules.md#what-a-filter-may-cost)): a preview, dry run or rule above it is refused with 400 `filter_too_costly` before it runs. 18,000,000 on PostgreSQL; 2,500,000 embedded, where a statement cannot be interrupted and every other request waits for it. `0` lifts the bound.",
        },
      ),
    },
    webhooks: {
      allowPrivate: variable("WEBHOOK_ALLOW_PRIVATE", boolean, false, {
        section: "Rules and events",
        about: "`true` lets webhooks deliver to loopback and private addresses (receivers on your own network).",
      }),
      timeoutMs: variable("WEBHOOK_TIMEOUT_MS", integer(1000, 60_000), 10_000, {
        section: "Rules and events",
        about: "How long a webhook receiver has to answer, 1000–60000.",
      }),
      /** Host resolution; undefined: the system resolver. */
      resolve: fixed<Resolve | undefined>(undefined),
      /** When delivery attempts are made; undefined: the Standard Webhooks schedule. */
      attemptOffsetsMs: fixed<readonly number[] | undefined>(undefined),
    },
    imports: {
      maxBytes: variable("IMPORT_MAX_BYTES", integer(1024, 1_099_511_627_776), 1_073_741_824, {
        section: "Imports and exports",
        about:
          "Largest CSV file an import accepts (413 `payload_too_large` above it); the JSON limit above does not apply to it.",
      }),
      leaseMs: variable("IMPORT_LEASE_MS", integer(1000, 3_600_000), 30_000, {
        section: "Imports and exports",
        about: "With several processes on one database: how soon another takes over an import whose process died.",
      }),
      chunkRows: storeDependent(
        "IMPORT_CHUNK_ROWS",
        integer(100, 50_000),
        { postgres: 10_000, embedded: 1_000 },
        {
          section: "Imports and exports",
          about:
            "Rows an import applies per transaction (100–50,000; 10,000 on PostgreSQL, 1,000 embedded): larger chunks hold the workspace's writes longer.",
        },
      ),
      workers: variable("IMPORT_WORKERS", integer(1, 32), 2, {
        section: "Imports and exports",
        about:
          "Import jobs a process runs at once (1–32), at most one per workspace, so that a small file of one workspace does not wait for another workspace's large one.",
      }),
    },
    exports: {
      /** Member numbers an export reads per statement: four chunks' worth, each statement's fixed cost spread over many rows. */
      batchSize: fixed(32_768),
      /** Statements an export keeps running ahead of the client, each on a connection of its own. */
      readAhead: fixed(2),
      concurrency: variable("EXPORT_CONCURRENCY", integer(1, 1000), 2, {
        section: "Imports and exports",
        about:
          "Exports (member files: `GET …/members` with `Accept: text/csv` or `application/x-ndjson`) one server process streams at once. One more is refused before any byte is sent: 503 `service_unavailable` with `Retry-After` (another process may have room).",
      }),
      perKey: variable("EXPORT_CONCURRENCY_PER_KEY", integer(1, 1000), 1, {
        section: "Imports and exports",
        about: "Of those, the exports of one API key. One more: 429 `too_many_exports` with `Retry-After`.",
      }),
      writeTimeoutMs: variable("EXPORT_WRITE_TIMEOUT_MS", integer(100, 3_600_000), 30_000, {
        section: "Imports and exports",
        about:
          "A client that takes nothing of its file for this long is disconnected (its transfer ends without the last chunk) and its place is given back. Idle time, not total time: a slow reader that keeps reading is not cut. A client that has taken nothing for 5 s (or this long, if shorter) is disconnected sooner when its place is the one a new export would otherwise be refused for (429 or 503): stalled readers hold places only while nobody else needs them.",
      }),
      /**
       * How long a client may take nothing before its place goes to an export that would otherwise
       * be refused (at most writeTimeoutMs): stalled readers of some keys cannot hold every place.
       */
      stalledAfterMs: fixed(5_000),
    },
  },
};

/** The server's configuration: where it listens, its database, and the settings of its features. */
export type Config = ValuesOf<typeof CONFIGURATION>;

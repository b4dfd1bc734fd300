import envSchema from "env-schema";
import { DEFAULTS } from "./defaults.ts";
import { resolveSettings, type Settings } from "./settings.ts";

const integer = (minimum: number, maximum: number, fallback?: number) => ({
  type: "integer",
  minimum,
  maximum,
  ...(fallback === undefined ? {} : { default: fallback }),
});
const boolean = (fallback: boolean) => ({ type: "boolean", default: fallback });
const POSTGRES_URL = { type: "string", pattern: "^postgres(ql)?://" };
const POSTGRES_URLS = { type: "string", pattern: "^\\s*postgres(ql)?://[^,]+(,\\s*postgres(ql)?://[^,]+)*,?\\s*$" };
const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/**
 * Every environment variable the server reads, with its check and default (from defaults.ts).
 * docs/configuration.md describes each; test/unit/configuration-docs.test.ts keeps the two in step.
 */
export const VARIABLES = {
  PORT: integer(0, 65535, DEFAULTS.server.port),
  HOST: { type: "string", minLength: 1, default: DEFAULTS.server.host },
  DATABASE_URL: POSTGRES_URL,
  DATABASE_LISTEN_URL: POSTGRES_URL,
  DATABASE_READ_URLS: POSTGRES_URLS,
  DATABASE_REPLICA_WAIT_MS: integer(0, 60_000, DEFAULTS.database.replicaWaitMs),
  DATABASE_REPLICA_MAX_LAG_MS: integer(0, 86_400_000, DEFAULTS.database.replicaMaxLagMs),
  DATABASE_POOL_SIZE: integer(1, 1000, DEFAULTS.database.poolSize),
  DATABASE_READ_POOL_SIZE: integer(1, 1000, DEFAULTS.database.readPoolSize),
  DATABASE_EXPORT_POOL_SIZE: integer(1, 1000, DEFAULTS.database.exportPoolSize),
  DATABASE_STATEMENT_TIMEOUT_MS: integer(100, 86_400_000, DEFAULTS.database.statementTimeoutMs),
  DATABASE_READ_TIMEOUT_MS: integer(100, 86_400_000, DEFAULTS.database.readTimeoutMs),
  DATABASE_CONNECT_TIMEOUT_MS: integer(100, 600_000, DEFAULTS.database.connectTimeoutMs),
  DATABASE_QUEUE_LIMIT: integer(0, 100_000, DEFAULTS.database.queueLimit),
  // Off saves a pooler that keeps no prepared statements the first failed statement of each
  // process (it is run again unnamed, and naming stops by itself).
  DATABASE_PREPARED_STATEMENTS: boolean(DEFAULTS.database.preparedStatements),
  DATA_DIR: { type: "string", minLength: 1, default: DEFAULTS.database.dataDir },
  ADMIN_TOKEN: { type: "string", minLength: 16 },
  PUBLIC_URL: { type: "string", pattern: "^https?://[^\\s]+$" },
  METRICS_TOKEN: { type: "string", minLength: 16 },
  LOG_LEVEL: { type: "string", enum: LOG_LEVELS, default: DEFAULTS.server.logLevel },
  BODY_LIMIT: integer(1024, 104_857_600, DEFAULTS.server.bodyLimit),
  RATE_LIMIT_PER_MINUTE: integer(0, 10_000_000, DEFAULTS.rateLimit.perMinute),
  // One more heavy request of a key than this is refused at once (429 too_many_heavy_requests).
  HEAVY_CONCURRENCY_PER_KEY: integer(1, 1000, DEFAULTS.rateLimit.heavyPerKey),
  EVENT_RETENTION_DAYS: integer(1, 3650, DEFAULTS.events.retentionDays),
  ACTIVITY_RETENTION_DAYS: integer(1, 3650, DEFAULTS.activities.retentionDays),
  TIME_RULES_INTERVAL_SECONDS: integer(1, 3600, DEFAULTS.rules.timeIntervalSeconds),
  // 0 lifts the bound (filter-cost.ts).
  // Unset: DEFAULTS.rules.costBudget of the store's kind.
  FILTER_COST_BUDGET: integer(0, 1_000_000_000_000),
  WEBHOOK_ALLOW_PRIVATE: boolean(DEFAULTS.webhooks.allowPrivate),
  WEBHOOK_TIMEOUT_MS: integer(1000, 60_000, DEFAULTS.webhooks.timeoutMs),
  IMPORT_MAX_BYTES: integer(1024, 1_099_511_627_776, DEFAULTS.imports.maxBytes),
  IMPORT_LEASE_MS: integer(1000, 3_600_000, DEFAULTS.imports.leaseMs),
  // Unset: DEFAULTS.imports.chunkRows of the store's kind.
  IMPORT_CHUNK_ROWS: integer(100, 50_000),
  IMPORT_WORKERS: integer(1, 32, DEFAULTS.imports.workers),
  // One more export than these is refused before any byte is sent (503; 429 too_many_exports).
  EXPORT_CONCURRENCY: integer(1, 1000, DEFAULTS.exports.concurrency),
  EXPORT_CONCURRENCY_PER_KEY: integer(1, 1000, DEFAULTS.exports.perKey),
  EXPORT_WRITE_TIMEOUT_MS: integer(100, 3_600_000, DEFAULTS.exports.writeTimeoutMs),
} as const;

type Variable = keyof typeof VARIABLES;
type Env = Partial<Record<Variable, string | number | boolean>>;

/** The server's configuration: where it listens, its database, and the settings of its features. */
export interface Config {
  listen: { port: number; host: string };
  logLevel: (typeof LOG_LEVELS)[number];
  database: {
    url: string | undefined;
    listenUrl: string | undefined;
    /** PostgreSQL streaming replicas that answer reads outside write transactions. */
    readUrls: string[];
    dataDir: string;
    poolSize: number;
    readPoolSize: number;
    exportPoolSize: number;
    statementTimeoutMs: number;
    readTimeoutMs: number;
    connectTimeoutMs: number;
    queueLimit: number;
    preparedStatements: boolean;
    replicaWaitMs: number;
    replicaMaxLagMs: number;
  };
  settings: Settings;
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Validates the environment at start, so a bad setting fails the start and not the first request. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable means "not set", as in most shells' `VAR= command`.
  const data = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ""));
  let values: Env;
  try {
    values = envSchema<Env>({ schema: { type: "object", properties: VARIABLES }, data });
  } catch (error) {
    const message = (error as Error).message
      .replace(/env\/(\w+)/g, "$1")
      .replace('must match pattern "^postgres(ql)?://"', "must be a postgresql:// connection string")
      .replace(
        /must match pattern "\^\\s\*postgres[^"]*"/,
        "must be postgresql:// connection strings separated by commas",
      )
      .replace(/must match pattern "\^https\?[^"]*"/, "must be an http:// or https:// URL");
    throw new ConfigError(`Invalid configuration: ${message}`);
  }
  if (values.DATABASE_LISTEN_URL && !values.DATABASE_URL) {
    throw new ConfigError(
      "Invalid configuration: DATABASE_LISTEN_URL needs DATABASE_URL (it is only used with PostgreSQL)",
    );
  }
  if (values.DATABASE_READ_URLS && !values.DATABASE_URL) {
    throw new ConfigError(
      "Invalid configuration: DATABASE_READ_URLS needs DATABASE_URL (replicas are read from only with PostgreSQL; the embedded store has none)",
    );
  }
  return sections(values as Required<Env>);
}

function sections(v: Record<Variable, any>): Config {
  return {
    listen: { port: v.PORT, host: v.HOST },
    logLevel: v.LOG_LEVEL,
    database: {
      url: v.DATABASE_URL,
      listenUrl: v.DATABASE_LISTEN_URL,
      readUrls: splitUrls(v.DATABASE_READ_URLS),
      dataDir: v.DATA_DIR,
      poolSize: v.DATABASE_POOL_SIZE,
      readPoolSize: v.DATABASE_READ_POOL_SIZE,
      exportPoolSize: v.DATABASE_EXPORT_POOL_SIZE,
      statementTimeoutMs: v.DATABASE_STATEMENT_TIMEOUT_MS,
      readTimeoutMs: v.DATABASE_READ_TIMEOUT_MS,
      connectTimeoutMs: v.DATABASE_CONNECT_TIMEOUT_MS,
      queueLimit: v.DATABASE_QUEUE_LIMIT,
      preparedStatements: v.DATABASE_PREPARED_STATEMENTS,
      replicaWaitMs: v.DATABASE_REPLICA_WAIT_MS,
      replicaMaxLagMs: v.DATABASE_REPLICA_MAX_LAG_MS,
    },
    // What the environment sets; everything else keeps its default (settings.ts).
    settings: resolveSettings({
      http: {
        bodyLimit: v.BODY_LIMIT,
        publicUrl: v.PUBLIC_URL,
        adminToken: v.ADMIN_TOKEN,
        metricsToken: v.METRICS_TOKEN,
      },
      rateLimit: { perMinute: v.RATE_LIMIT_PER_MINUTE, heavyPerKey: v.HEAVY_CONCURRENCY_PER_KEY },
      events: { retentionDays: v.EVENT_RETENTION_DAYS },
      activities: { retentionDays: v.ACTIVITY_RETENTION_DAYS },
      rules: { timeIntervalSeconds: v.TIME_RULES_INTERVAL_SECONDS, costBudget: v.FILTER_COST_BUDGET },
      webhooks: { allowPrivate: v.WEBHOOK_ALLOW_PRIVATE, timeoutMs: v.WEBHOOK_TIMEOUT_MS },
      imports: {
        maxBytes: v.IMPORT_MAX_BYTES,
        leaseMs: v.IMPORT_LEASE_MS,
        chunkRows: v.IMPORT_CHUNK_ROWS,
        workers: v.IMPORT_WORKERS,
      },
      exports: {
        concurrency: v.EXPORT_CONCURRENCY,
        perKey: v.EXPORT_CONCURRENCY_PER_KEY,
        writeTimeoutMs: v.EXPORT_WRITE_TIMEOUT_MS,
      },
    }),
  };
}

const splitUrls = (urls: string | undefined): string[] =>
  (urls ?? "")
    .split(",")
    .map((url) => url.trim())
    .filter(Boolean);

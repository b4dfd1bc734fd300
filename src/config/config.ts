import envSchema from "env-schema";
import { STORE_DEFAULTS } from "./defaults.ts";

/** The service's configuration, from environment variables; see the README's table. */
export interface Config {
  PORT: number;
  HOST: string;
  DATABASE_URL?: string;
  DATABASE_LISTEN_URL?: string;
  DATABASE_POOL_SIZE: number;
  DATABASE_READ_POOL_SIZE: number;
  DATABASE_STATEMENT_TIMEOUT_MS: number;
  DATABASE_READ_TIMEOUT_MS: number;
  DATABASE_CONNECT_TIMEOUT_MS: number;
  DATABASE_QUEUE_LIMIT: number;
  DATABASE_PREPARED_STATEMENTS: boolean;
  DATA_DIR: string;
  PUBLIC_URL?: string;
  METRICS_TOKEN?: string;
  ADMIN_TOKEN?: string;
  LOG_LEVEL: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  BODY_LIMIT: number;
  RATE_LIMIT_PER_MINUTE: number;
  EVENT_RETENTION_DAYS: number;
  WEBHOOK_ALLOW_PRIVATE: boolean;
  WEBHOOK_TIMEOUT_MS: number;
  IMPORT_MAX_BYTES: number;
  IMPORT_LEASE_MS: number;
  IMPORT_CHUNK_ROWS?: number;
  IMPORT_WORKERS: number;
}

const schema = {
  type: "object",
  properties: {
    PORT: { type: "integer", minimum: 0, maximum: 65535, default: 3000 },
    HOST: { type: "string", minLength: 1, default: "127.0.0.1" },
    DATABASE_URL: { type: "string", pattern: "^postgres(ql)?://" },
    DATABASE_LISTEN_URL: { type: "string", pattern: "^postgres(ql)?://" },
    DATABASE_POOL_SIZE: { type: "integer", minimum: 1, maximum: 1000, default: STORE_DEFAULTS.poolSize },
    DATABASE_READ_POOL_SIZE: { type: "integer", minimum: 1, maximum: 1000, default: STORE_DEFAULTS.readPoolSize },
    DATABASE_STATEMENT_TIMEOUT_MS: {
      type: "integer",
      minimum: 100,
      maximum: 86400000,
      default: STORE_DEFAULTS.statementTimeoutMs,
    },
    DATABASE_READ_TIMEOUT_MS: {
      type: "integer",
      minimum: 100,
      maximum: 86400000,
      default: STORE_DEFAULTS.readTimeoutMs,
    },
    DATABASE_CONNECT_TIMEOUT_MS: {
      type: "integer",
      minimum: 100,
      maximum: 600000,
      default: STORE_DEFAULTS.connectTimeoutMs,
    },
    DATABASE_QUEUE_LIMIT: { type: "integer", minimum: 0, maximum: 100000, default: STORE_DEFAULTS.queueLimit },
    // Off saves a pooler that keeps no prepared statements the first failed statement of each
    // process (it is run again unnamed, and naming stops by itself).
    DATABASE_PREPARED_STATEMENTS: { type: "boolean", default: true },
    DATA_DIR: { type: "string", minLength: 1, default: "./data" },
    ADMIN_TOKEN: { type: "string", minLength: 16 },
    PUBLIC_URL: { type: "string", pattern: "^https?://[^\\s]+$" },
    METRICS_TOKEN: { type: "string", minLength: 16 },
    LOG_LEVEL: {
      type: "string",
      enum: ["fatal", "error", "warn", "info", "debug", "trace", "silent"],
      default: "info",
    },
    BODY_LIMIT: { type: "integer", minimum: 1024, maximum: 104857600, default: 1048576 },
    RATE_LIMIT_PER_MINUTE: { type: "integer", minimum: 0, maximum: 10000000, default: 6000 },
    EVENT_RETENTION_DAYS: { type: "integer", minimum: 1, maximum: 3650, default: 7 },
    WEBHOOK_ALLOW_PRIVATE: { type: "boolean", default: false },
    WEBHOOK_TIMEOUT_MS: { type: "integer", minimum: 1000, maximum: 60000, default: 10000 },
    // The largest CSV file an import accepts (1 GiB); it is stored as it arrives, not held in memory.
    IMPORT_MAX_BYTES: { type: "integer", minimum: 1024, maximum: 1099511627776, default: 1073741824 },
    // How soon another process takes over an import job whose process stopped (died, or hangs).
    IMPORT_LEASE_MS: { type: "integer", minimum: 1000, maximum: 3600000, default: 30000 },
    // Rows an import applies per transaction: larger chunks import faster, and hold the
    // workspace's member lock longer each (other writes of the workspace wait between chunks).
    // Unset: 10,000 on PostgreSQL, 5,000 on the embedded store (src/features/imports/import-runner.ts).
    IMPORT_CHUNK_ROWS: { type: "integer", minimum: 100, maximum: 50000 },
    // Import jobs a process runs at once, at most one per workspace: a workspace's small file
    // does not wait for another workspace's large one.
    IMPORT_WORKERS: { type: "integer", minimum: 1, maximum: 32, default: 2 },
  },
} as const;

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Validates the environment at start, so a bad setting fails the start and not the first request. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable means "not set", as in most shells' `VAR= command`.
  const data = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ""));
  let config: Config;
  try {
    config = envSchema<Config>({ schema, data });
  } catch (error) {
    const message = (error as Error).message
      .replace(/env\/(\w+)/g, "$1")
      .replace('must match pattern "^postgres(ql)?://"', "must be a postgresql:// connection string")
      .replace(/must match pattern "\^https\?[^"]*"/, "must be an http:// or https:// URL");
    throw new ConfigError(`Invalid configuration: ${message}`);
  }
  if (config.DATABASE_LISTEN_URL && !config.DATABASE_URL) {
    throw new ConfigError(
      "Invalid configuration: DATABASE_LISTEN_URL needs DATABASE_URL (it is only used with PostgreSQL)",
    );
  }
  return config;
}

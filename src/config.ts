import envSchema from "env-schema";

/** The service's configuration, from environment variables; see the README's table. */
export interface Config {
  PORT: number;
  HOST: string;
  DATABASE_URL?: string;
  DATA_DIR: string;
  ADMIN_TOKEN?: string;
  LOG_LEVEL: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  BODY_LIMIT: number;
  RATE_LIMIT_PER_MINUTE: number;
  EVENT_RETENTION_DAYS: number;
  WEBHOOK_ALLOW_PRIVATE: boolean;
  WEBHOOK_TIMEOUT_MS: number;
}

const schema = {
  type: "object",
  properties: {
    PORT: { type: "integer", minimum: 0, maximum: 65535, default: 3000 },
    HOST: { type: "string", minLength: 1, default: "127.0.0.1" },
    DATABASE_URL: { type: "string", pattern: "^postgres(ql)?://" },
    DATA_DIR: { type: "string", minLength: 1, default: "./data" },
    ADMIN_TOKEN: { type: "string", minLength: 16 },
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
  },
} as const;

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Validates the environment at start, so a bad setting fails the start and not the first request. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable means "not set", as in most shells' `VAR= command`.
  const data = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ""));
  try {
    return envSchema<Config>({ schema, data });
  } catch (error) {
    const message = (error as Error).message
      .replace(/env\/(\w+)/g, "$1")
      .replace('must match pattern "^postgres(ql)?://"', "must be a postgresql:// connection string");
    throw new ConfigError(`Invalid configuration: ${message}`);
  }
}

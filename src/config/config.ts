import envSchema from "env-schema";
import { CONFIGURATION, type Config } from "./configuration.ts";
import { isVariable, valuesOf, variablesOf } from "./variable.ts";

export type { Config } from "./configuration.ts";

/** Every environment variable the server reads, by name: their declarations are in configuration.ts. */
export const VARIABLES = Object.fromEntries(variablesOf(CONFIGURATION).map((v) => [v.name, v]));

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Validates the environment at start, so a bad setting fails the start and not the first request. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable means "not set", as in most shells' `VAR= command`.
  const data = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ""));
  const properties = Object.fromEntries(Object.values(VARIABLES).map((v) => [v.name, v.parser.schema]));
  let values: Record<string, unknown>;
  try {
    values = envSchema({ schema: { type: "object", properties }, data });
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
  // Each setting: its variable's value when set, else its default.
  return valuesOf(CONFIGURATION, (node) =>
    isVariable(node) && values[node.name] !== undefined ? node.parser.read(values[node.name]) : node.fallback,
  );
}

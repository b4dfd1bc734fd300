import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/config.ts";
import { STORE_DEFAULTS } from "../../src/config/defaults.ts";
import { EXPORT_DEFAULTS } from "../../src/features/exports/export-service.ts";

describe("the database and HTTP settings", () => {
  it("default to the store's limits", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      DATABASE_POOL_SIZE: STORE_DEFAULTS.poolSize,
      DATABASE_READ_POOL_SIZE: STORE_DEFAULTS.readPoolSize,
      DATABASE_EXPORT_POOL_SIZE: STORE_DEFAULTS.exportPoolSize,
      DATABASE_STATEMENT_TIMEOUT_MS: STORE_DEFAULTS.statementTimeoutMs,
      DATABASE_READ_TIMEOUT_MS: STORE_DEFAULTS.readTimeoutMs,
      DATABASE_CONNECT_TIMEOUT_MS: STORE_DEFAULTS.connectTimeoutMs,
      DATABASE_QUEUE_LIMIT: STORE_DEFAULTS.queueLimit,
      DATABASE_PREPARED_STATEMENTS: true,
      EXPORT_CONCURRENCY: EXPORT_DEFAULTS.concurrency,
      EXPORT_CONCURRENCY_PER_KEY: EXPORT_DEFAULTS.perKey,
      EXPORT_WRITE_TIMEOUT_MS: EXPORT_DEFAULTS.writeTimeoutMs,
    });
    expect(config.PUBLIC_URL).toBeUndefined();
    expect(config.METRICS_TOKEN).toBeUndefined();
  });

  it("are read from the environment", () => {
    const config = loadConfig({
      DATABASE_URL: "postgresql://pgbouncer:6432/app",
      DATABASE_LISTEN_URL: "postgresql://db:5432/app",
      DATABASE_POOL_SIZE: "4",
      DATABASE_CONNECT_TIMEOUT_MS: "1500",
      DATABASE_PREPARED_STATEMENTS: "false",
      PUBLIC_URL: "https://audiences.example.com",
      METRICS_TOKEN: "a-long-enough-token",
      DATABASE_EXPORT_POOL_SIZE: "3",
      EXPORT_CONCURRENCY: "8",
      EXPORT_CONCURRENCY_PER_KEY: "1",
      EXPORT_WRITE_TIMEOUT_MS: "5000",
    });
    expect(config).toMatchObject({
      DATABASE_EXPORT_POOL_SIZE: 3,
      EXPORT_CONCURRENCY: 8,
      EXPORT_CONCURRENCY_PER_KEY: 1,
      EXPORT_WRITE_TIMEOUT_MS: 5000,
      DATABASE_POOL_SIZE: 4,
      DATABASE_CONNECT_TIMEOUT_MS: 1500,
      DATABASE_PREPARED_STATEMENTS: false,
    });
  });

  it.each([
    [{ DATABASE_POOL_SIZE: "0" }, "DATABASE_POOL_SIZE"],
    [{ DATABASE_READ_TIMEOUT_MS: "soon" }, "DATABASE_READ_TIMEOUT_MS"],
    [{ DATABASE_QUEUE_LIMIT: "-1" }, "DATABASE_QUEUE_LIMIT"],
    [{ EXPORT_CONCURRENCY: "0" }, "EXPORT_CONCURRENCY"],
    [{ EXPORT_WRITE_TIMEOUT_MS: "10" }, "EXPORT_WRITE_TIMEOUT_MS"],
    [{ DATABASE_PREPARED_STATEMENTS: "sometimes" }, "DATABASE_PREPARED_STATEMENTS"],
    [{ PUBLIC_URL: "audiences.example.com" }, "PUBLIC_URL must be an http:// or https:// URL"],
    [{ METRICS_TOKEN: "short" }, "METRICS_TOKEN"],
    [{ DATABASE_LISTEN_URL: "postgresql://db/app" }, "DATABASE_LISTEN_URL needs DATABASE_URL"],
  ])("refuse %o with a clear message", (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});

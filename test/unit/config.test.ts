import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/config.ts";

describe("the configuration", () => {
  it("default to the store's limits", () => {
    const config = loadConfig({});
    expect(config.database).toMatchObject({ databaseUrl: undefined, listenUrl: undefined, readUrls: [] });
    expect(config.database).toMatchObject({ poolSize: 10, readPoolSize: 5, queueLimit: 50, preparedStatements: true });
    expect(config.settings.http.publicUrl).toBeUndefined();
    expect(config.settings.http.metricsToken).toBeUndefined();
  });

  it("are read from the environment", () => {
    const config = loadConfig({
      DATABASE_URL: "postgresql://pgbouncer:6432/app",
      DATABASE_LISTEN_URL: "postgresql://db:5432/app",
      DATABASE_POOL_SIZE: "4",
      DATABASE_CONNECT_TIMEOUT_MS: "1500",
      DATABASE_PREPARED_STATEMENTS: "false",
      DATABASE_READ_URLS: "postgresql://replica-1:5432/app, postgresql://replica-2:5432/app",
      DATABASE_REPLICA_WAIT_MS: "50",
      DATABASE_REPLICA_MAX_LAG_MS: "3000",
      PUBLIC_URL: "https://audiences.example.com",
      METRICS_TOKEN: "a-long-enough-token",
    });
    expect(config.database).toMatchObject({
      databaseUrl: "postgresql://pgbouncer:6432/app",
      listenUrl: "postgresql://db:5432/app",
      poolSize: 4,
      connectTimeoutMs: 1500,
      preparedStatements: false,
      readUrls: ["postgresql://replica-1:5432/app", "postgresql://replica-2:5432/app"],
      replicaWaitMs: 50,
      replicaMaxLagMs: 3000,
    });
    expect(config.settings.http).toMatchObject({
      publicUrl: "https://audiences.example.com",
      metricsToken: "a-long-enough-token",
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
    [{ DATABASE_READ_URLS: "postgresql://replica/app" }, "DATABASE_READ_URLS needs DATABASE_URL"],
    [
      { DATABASE_URL: "postgresql://db/app", DATABASE_READ_URLS: "replica:5432" },
      "DATABASE_READ_URLS must be postgresql:// connection strings separated by commas",
    ],
    [{ DATABASE_REPLICA_WAIT_MS: "-1" }, "DATABASE_REPLICA_WAIT_MS"],
  ])("refuse %o with a clear message", (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe("the features' settings", () => {
  it("default to their declarations and take each variable into its section", () => {
    expect(loadConfig({}).settings).toMatchObject({
      rateLimit: { perMinute: 6000 },
      events: { retentionDays: 7 },
      webhooks: { allowPrivate: false, timeoutMs: 10_000 },
      imports: { maxBytes: 1_073_741_824, leaseMs: 30_000, chunkRows: undefined },
      exports: { concurrency: 2, perKey: 1, writeTimeoutMs: 30_000 },
    });
    const config = loadConfig({
      RATE_LIMIT_PER_MINUTE: "0",
      EVENT_RETENTION_DAYS: "30",
      WEBHOOK_ALLOW_PRIVATE: "true",
      WEBHOOK_TIMEOUT_MS: "2000",
      IMPORT_MAX_BYTES: "2048",
      IMPORT_LEASE_MS: "1500",
      IMPORT_CHUNK_ROWS: "100",
      DATABASE_EXPORT_POOL_SIZE: "3",
      EXPORT_CONCURRENCY: "8",
      EXPORT_CONCURRENCY_PER_KEY: "1",
      EXPORT_WRITE_TIMEOUT_MS: "5000",
      BODY_LIMIT: "4096",
      ADMIN_TOKEN: "an-admin-token-of-16",
      PORT: "0",
      HOST: "0.0.0.0",
      LOG_LEVEL: "warn",
    });
    expect(config).toMatchObject({
      listen: { port: 0, host: "0.0.0.0" },
      logLevel: "warn",
      settings: {
        http: { bodyLimit: 4096, adminToken: "an-admin-token-of-16" },
        rateLimit: { perMinute: 0 },
        events: { retentionDays: 30 },
        webhooks: { allowPrivate: true, timeoutMs: 2000 },
        imports: { maxBytes: 2048, leaseMs: 1500, chunkRows: 100 },
        exports: { concurrency: 8, perKey: 1, writeTimeoutMs: 5000 },
      },
    });
  });
});

import type { FastifyBaseLogger } from "fastify";
import { buildApp } from "./app.ts";
import { createServices } from "./composition.ts";
import { ConfigError, loadConfig } from "./config/config.ts";
import { StoreOpenError } from "./platform/db/data-dir.ts";
import { openStore } from "./platform/db/database.ts";
import { sqlState } from "./platform/db/pg-errors.ts";
import { idempotencyRepo } from "./platform/http/idempotency-repo.ts";

async function main(): Promise<void> {
  const config = loadConfig();
  // The server's logger, once it exists (the store is opened before it).
  let log: FastifyBaseLogger | undefined;
  const store = await openStore({
    databaseUrl: config.DATABASE_URL,
    listenUrl: config.DATABASE_LISTEN_URL,
    dataDir: config.DATA_DIR,
    poolSize: config.DATABASE_POOL_SIZE,
    readPoolSize: config.DATABASE_READ_POOL_SIZE,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
    readTimeoutMs: config.DATABASE_READ_TIMEOUT_MS,
    connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
    queueLimit: config.DATABASE_QUEUE_LIMIT,
    preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
    onPreparedStatementsLost: (error) => {
      const message =
        "The connections of DATABASE_URL keep no prepared statements (a pooler in transaction mode): statements are sent unnamed from now on. DATABASE_PREPARED_STATEMENTS=false skips this check.";
      if (log) log.warn({ sqlState: sqlState(error) }, message);
      else process.stderr.write(`${message}\n`);
    },
    // Another process took the data directory over (this one stalled for seconds): stop at once
    // rather than write to files that are no longer ours alone.
    onLockLost: (error) => {
      process.stderr.write(
        `Stopping: the lock on the data directory ${config.DATA_DIR} was lost (${error.message}).\n`,
      );
      process.exit(1);
    },
  });
  const { membership, admin } = createServices(store);
  // After an upgrade that left rule matches to compute, before any request reads them.
  const refreshed = await membership.refreshOutdatedRules();
  if (refreshed > 0) process.stdout.write(`computed the rule matches of ${refreshed} audience(s) after an upgrade\n`);
  const first = await admin.bootstrap();
  // Responses kept for Idempotency-Key replays expire after 24 hours.
  const purge = () => idempotencyRepo.purgeExpired(store.db).catch(() => 0);
  await purge();
  setInterval(purge, 3_600_000).unref();
  const app = await buildApp({
    store,
    adminToken: config.ADMIN_TOKEN,
    bodyLimit: config.BODY_LIMIT,
    rateLimit: { max: config.RATE_LIMIT_PER_MINUTE, windowMs: 60_000 },
    allowPrivateWebhooks: config.WEBHOOK_ALLOW_PRIVATE,
    eventRetentionDays: config.EVENT_RETENTION_DAYS,
    webhooks: { webhookTimeoutMs: config.WEBHOOK_TIMEOUT_MS },
    imports: {
      importMaxBytes: config.IMPORT_MAX_BYTES,
      importLeaseMs: config.IMPORT_LEASE_MS,
      importChunkRows: config.IMPORT_CHUNK_ROWS,
      importWorkers: config.IMPORT_WORKERS,
    },
    logger: { level: config.LOG_LEVEL },
    publicUrl: config.PUBLIC_URL,
    metricsToken: config.METRICS_TOKEN,
  });

  log = app.log;

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, "shutting down: finishing in-flight requests");
    await app.close();
    await store.close();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));

  const address = await app.listen({ port: config.PORT, host: config.HOST });
  const where = store.kind === "embedded" ? `embedded store in ${config.DATA_DIR}` : "PostgreSQL";
  const lines = ["", `audience-service listening on ${address} (${where})`];
  if (first) {
    lines.push(
      "",
      "First start: created a workspace and an API key. The key is shown only now; keep it.",
      `  export WORKSPACE_ID=${first.workspaceId}`,
      `  export API_KEY=${first.apiKey}`,
      "",
      "Try:",
      `  curl -s -H "Authorization: Bearer $API_KEY" ${address}/v0/workspaces/$WORKSPACE_ID/audiences`,
      "",
    );
  }
  // One write: whoever reads the output sees the first start's key with the address, not after it.
  process.stdout.write(`${lines.join("\n")}\n`);
}

main().catch((error: unknown) => {
  // Configuration and data directory problems are the operator's to fix: one clear sentence.
  const message =
    error instanceof ConfigError || error instanceof StoreOpenError
      ? error.message
      : `Failed to start: ${(error as Error)?.stack ?? error}`;
  process.stderr.write(`${message}\n`);
  process.exit(1);
});

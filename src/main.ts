import type { FastifyBaseLogger } from "fastify";
import { buildApp } from "./app.ts";
import { ConfigError, loadConfig } from "./config/config.ts";
import { StoreOpenError } from "./platform/db/data-dir.ts";
import { openStore } from "./platform/db/database.ts";
import { sqlState } from "./platform/db/pg-errors.ts";

async function main(): Promise<void> {
  const config = loadConfig();
  const { database } = config;
  // The server's logger, once it exists (the store is opened before it).
  let log: FastifyBaseLogger | undefined;
  const store = await openStore({
    ...database,
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
        `Stopping: the lock on the data directory ${database.dataDir} was lost (${error.message}).\n`,
      );
      process.exit(1);
    },
  });
  const app = await buildApp({ store, settings: config.settings, logger: { level: config.logLevel } });
  log = app.log;
  const { membership, admin } = app.services;
  // After an upgrade that left rule matches to compute, before any request reads them.
  const refreshed = await membership.refreshOutdatedRules();
  if (refreshed > 0) process.stdout.write(`computed the rule matches of ${refreshed} audience(s) after an upgrade\n`);
  const first = await admin.bootstrap();
  // A restart shows what the store holds and how to get a key again: keys are shown only once.
  const known = first ? undefined : await admin.someWorkspaces(SHOWN_WORKSPACES);

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

  const address = await app.listen(config.listen);
  const where = store.kind === "embedded" ? `embedded store in ${database.dataDir}` : "PostgreSQL";
  const lines = ["", `audience-service listening on ${address} (${where})`];
  if (first) {
    lines.push(
      "",
      "First start: created a workspace and an API key. The key is shown only now; keep it.",
      `  export WORKSPACE_ID=${first.workspaceId}`,
      `  export API_KEY=${first.apiKey}`,
      "",
      "The console, signed in to this workspace (the key travels in the link's fragment, which the browser does not send):",
      `  ${address}/console#key=${first.apiKey}`,
      "",
      "Try:",
      `  curl -s -H "Authorization: Bearer $API_KEY" ${address}/v0/workspaces/$WORKSPACE_ID/audiences`,
      "",
    );
  } else if (known && known.count > 0) {
    lines.push("", ...restartLines(address, known, config.settings.http.adminToken !== undefined), "");
  }
  // One write: whoever reads the output sees the first start's key with the address, not after it.
  process.stdout.write(`${lines.join("\n")}\n`);
}

/** Workspaces a restart names; beyond these it gives their count. */
const SHOWN_WORKSPACES = 5;

/** A restart's lines: the workspaces, and how to make an API key for one (a lost key is not shown again). */
function restartLines(
  address: string,
  { first, count }: { first: { id: string; name: string }[]; count: number },
  adminToken: boolean,
): string[] {
  const more = count > first.length ? ` (the first ${first.length} of ${count})` : "";
  const lines = [`Workspaces${more}:`, ...first.map((ws) => `  ${ws.id}  ${ws.name}`)];
  const workspaceId = first.length === 1 ? (first[0]?.id ?? "") : "<workspace id>";
  const curl = `  curl -s -X POST -H "Authorization: Bearer $ADMIN_TOKEN" ${address}/v0/workspaces/${workspaceId}/api-keys`;
  lines.push(
    "",
    adminToken
      ? "A new API key (an API key is shown only once, when it is made), with this server's ADMIN_TOKEN:"
      : "A new API key (an API key is shown only once, when it is made): restart with ADMIN_TOKEN set (a secret of at least 16 characters), then:",
    curl,
    `  or: API_URL=${address} npx audience-service keys create --workspace ${workspaceId}`,
  );
  return lines;
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

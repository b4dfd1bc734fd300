import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorkspace, upsertMembers } from "../support/factories.ts";
import { call, type LiveServer, startLiveServer, urlOf } from "../support/live-server.ts";

/**
 * A read past DATABASE_READ_TIMEOUT_MS is answered 503, and its statement does not outlive the
 * answer: the read timeout used to close the connection only, and PostgreSQL, which notices a
 * closed connection only when it next writes to it, ran the statement to its end. A statement
 * made slow for sure: the members table locked by another transaction, so the preview waits on
 * the lock, which it would do forever. PostgreSQL only (the embedded store runs one statement at
 * a time in process and cannot be interrupted; previews are bounded there by their cost, see
 * filter-cost.test.ts). Runs through PgBouncer too (npm run test:pgbouncer).
 */
const READ_TIMEOUT_MS = 300;
const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

describe.runIf(onPostgres)("a read past the read timeout", () => {
  let server: LiveServer;
  let monitor: pg.Client;
  beforeAll(async () => {
    // No background work: its statements would wait on the lock too and blur what is watched.
    server = await startLiveServer({ store: { readTimeoutMs: READ_TIMEOUT_MS }, workers: false });
    monitor = new pg.Client({ connectionString: server.databaseUrl });
    await monitor.connect();
  });
  afterAll(async () => {
    await monitor?.end();
    await server?.close();
  });

  /** The statements of this database waiting on a lock: the previews that still run. */
  const waiting = async () =>
    (
      await monitor.query(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND wait_event_type = 'Lock'",
      )
    ).rows.length;

  const untilNoneWaiting = async () => {
    for (const deadline = Date.now() + 10_000; (await waiting()) > 0; ) {
      if (Date.now() > deadline) throw new Error("a timed-out preview still runs on the database");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it("answers 503 and cancels the statement, on every try", async () => {
    const ws = await createWorkspace(server);
    await upsertMembers(ws, [{ email: "reader@example.com" }]);
    const preview = () =>
      call(server, "POST", urlOf("/v0/workspaces/{workspaceId}/audiences/preview", { workspaceId: ws.id }), {
        token: ws.key,
        body: { filter: { field: "email", op: "contains", value: "reader" } },
      });
    const holder = new pg.Client({ connectionString: server.databaseUrl });
    await holder.connect();
    await holder.query("BEGIN");
    await holder.query("LOCK TABLE members IN ACCESS EXCLUSIVE MODE");
    try {
      // More tries than the read pool has connections: each comes back to the pool or is replaced.
      for (let i = 0; i < 7; i++) {
        const response = await preview();
        expect(response.status).toBe(503);
        expect(response.problem?.code).toBe("service_unavailable");
        await untilNoneWaiting();
      }
    } finally {
      await holder.query("ROLLBACK");
      await holder.end();
    }
    // The same preview, the lock gone, is answered.
    const response = await preview();
    expect(response.status).toBe(200);
  });
});

import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorkspace, upsertMembers } from "../support/factories.ts";
import { call, type LiveServer, startLiveServer, urlOf } from "../support/live-server.ts";

/**
 * One API key runs at most HEAVY_CONCURRENCY_PER_KEY (2) heavy operations at once: a third is
 * refused at once with 429 too_many_heavy_requests and Retry-After, while another key's is
 * answered. Two previews are held running by a lock on the members table. PostgreSQL only: the
 * embedded store has no second connection to hold a lock from (test/unit/heavy-requests.test.ts
 * shows the limit itself, whatever the store).
 */
const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

describe.runIf(onPostgres)("heavy operations of one API key", () => {
  let server: LiveServer;
  let monitor: pg.Client;
  beforeAll(async () => {
    server = await startLiveServer({ workers: false });
    monitor = new pg.Client({ connectionString: server.databaseUrl });
    await monitor.connect();
  });
  afterAll(async () => {
    await monitor?.end();
    await server?.close();
  });

  const waitingOnLock = async () =>
    (
      await monitor.query(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND wait_event_type = 'Lock'",
      )
    ).rows.length;

  it("refuses a third at once, with Retry-After, and answers the two and another key's", async () => {
    const ws = await createWorkspace(server);
    const other = await createWorkspace(server);
    await upsertMembers(ws, [{ email: "reader@example.com" }]);
    const preview = (workspace: { id: string; key: string }, headers?: Record<string, string>) =>
      call(server, "POST", urlOf("/v0/workspaces/{workspaceId}/audiences/preview", { workspaceId: workspace.id }), {
        token: workspace.key,
        body: { filter: { field: "email", op: "contains", value: "reader" } },
        ...(headers ? { headers } : {}),
      });
    const retried = { "idempotency-key": "third-preview" };
    const holder = new pg.Client({ connectionString: server.databaseUrl });
    await holder.connect();
    await holder.query("BEGIN");
    await holder.query("LOCK TABLE members IN ACCESS EXCLUSIVE MODE");
    let held: Promise<Awaited<ReturnType<typeof preview>>[]> | undefined;
    try {
      held = Promise.all([preview(ws), preview(ws)]);
      for (const deadline = Date.now() + 10_000; (await waitingOnLock()) < 2; ) {
        if (Date.now() > deadline) throw new Error("the two previews never reached the database");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const third = await preview(ws, retried);
      expect(third.status).toBe(429);
      expect(third.problem?.code).toBe("too_many_heavy_requests");
      expect(third.headers.get("retry-after")).toBe("1");
      // Another key's preview is not refused: it waits on the lock like the two.
      const another = preview(other);
      await holder.query("ROLLBACK");
      expect((await another).status).toBe(200);
    } finally {
      await holder.query("ROLLBACK").catch(() => {});
      await holder.end();
    }
    expect((await held).map((r) => r.status)).toEqual([200, 200]);
    // Their places are given back, and the refused one, retried with its Idempotency-Key, runs.
    const retry = await preview(ws, retried);
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
  });
});

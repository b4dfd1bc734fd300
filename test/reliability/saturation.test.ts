import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAudience, createWorkspace, type TestWorkspace } from "../support/factories.ts";
import { call, type LiveServer, startLiveServer, urlOf } from "../support/live-server.ts";

/**
 * 200 concurrent adds of 2,000 new ids each, over 10 workspaces, against a server whose write
 * queue is small: on PostgreSQL the writes it cannot queue are refused at once with 503 and
 * Retry-After (instead of waiting 30 s and failing with 500), and the reads sent meanwhile are
 * answered from their own pool, not behind the writes. On both stores only 200 or 503 come back
 * and every acknowledged add is whole. (The embedded store runs each statement on the event loop,
 * which is then its queue: requests reach it no faster than it writes, so it rarely refuses;
 * fewer requests show the same there.)
 */
const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
const REQUESTS = onPostgres ? 200 : 40;
const IDS_PER_REQUEST = 2_000;
const WORKSPACES = 10;

let server: LiveServer;
beforeAll(async () => {
  server = await startLiveServer({ store: { poolSize: 3, queueLimit: 10, connectTimeoutMs: 2_000 } });
});
afterAll(() => server.close());

describe(`a burst of bulk writes on the ${onPostgres ? "PostgreSQL" : "embedded"} store`, () => {
  it("refuses what it cannot queue with 503 and Retry-After, and applies the rest whole", async () => {
    const targets: Array<{ ws: TestWorkspace; audienceId: string }> = [];
    for (let i = 0; i < WORKSPACES; i++) {
      const ws = await createWorkspace(server);
      targets.push({ ws, audienceId: await createAudience(ws) });
    }
    const writes = Array.from({ length: REQUESTS }, async (_, n) => {
      const { ws, audienceId } = targets[n % WORKSPACES] as (typeof targets)[number];
      const memberIds = Array.from({ length: IDS_PER_REQUEST }, (_, k) => `burst_${n}_${k}`);
      const url = urlOf("/v0/workspaces/{workspaceId}/audiences/{audienceId}/members", {
        workspaceId: ws.id,
        audienceId,
      });
      const answer = await call(server, "POST", url, { token: ws.key, body: { memberIds } });
      return { n, answer, end: Date.now() };
    });
    // Reads sent while the writes are queued and refused.
    const reads = Array.from({ length: 20 }, async (_, n) => {
      const { ws, audienceId } = targets[n % WORKSPACES] as (typeof targets)[number];
      const url = urlOf("/v0/workspaces/{workspaceId}/audiences/{audienceId}", { workspaceId: ws.id, audienceId });
      const answer = await call(server, "GET", url, { token: ws.key });
      return { answer, end: Date.now() };
    });
    const [written, read] = await Promise.all([Promise.all(writes), Promise.all(reads)]);

    const statuses = written.map((w) => w.answer.status);
    expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    expect(statuses).toContain(200);
    if (onPostgres) expect(statuses).toContain(503);
    for (const { answer } of written.filter((w) => w.answer.status === 503)) {
      expect(answer.problem?.code).toBe("service_unavailable");
      expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    // Each acknowledged add is there whole, and nothing of a refused one is.
    for (const [index, { ws, audienceId }] of targets.entries()) {
      const acknowledged = written.filter((w) => w.n % WORKSPACES === index && w.answer.status === 200).length;
      const page = await ws.api.GET("/v0/workspaces/{workspaceId}/audiences/{audienceId}/members", {
        params: { path: { workspaceId: ws.id, audienceId }, query: { limit: 1 } },
      });
      expect(page.totalCount).toBe(acknowledged * IDS_PER_REQUEST);
    }
    if (onPostgres) {
      // Reads have a pool of their own: each is answered, and before the last write is.
      expect(read.map((r) => r.answer.status)).toEqual(read.map(() => 200));
      const lastWrite = Math.max(...written.map((w) => w.end));
      expect(read.filter((r) => r.end > lastWrite)).toEqual([]);
    }
  });
});

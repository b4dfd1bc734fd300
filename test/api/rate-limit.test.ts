import { describe, expect } from "vitest";
import { buildApp } from "../../src/app.ts";
import type { Store } from "../../src/platform/db/database.ts";
import { checkedClient } from "../support/checked-client.ts";
import { it } from "../support/fixture.ts";
import { reportedRequests } from "../support/rate-limits.ts";

const AUDIENCES = "/v0/workspaces/{workspaceId}/audiences";

/**
 * Another server on the live server's store (a second server process, as behind a load balancer),
 * with a limit of 3 requests per minute per API key. list() answers whole responses, for their
 * headers, each checked against the contract.
 */
async function limitedServer(store: Store) {
  const app = await buildApp({
    store,
    settings: { http: { adminToken: "limit-test-admin-token" }, rateLimit: { perMinute: 3 } },
  });
  const baseUrl = await app.listen({ port: 0, host: "127.0.0.1" });
  const list = (workspaceId: string, key: string) =>
    checkedClient(baseUrl, key).raw.GET(AUDIENCES, { params: { path: { workspaceId } } });
  return { app, baseUrl, list };
}

describe("rate limiting per API key", () => {
  it("counts down in RateLimit headers, then answers 429 rate_limited with Retry-After", async ({ server, ws }) => {
    const limited = await limitedServer(server.store);
    try {
      const get = () => limited.list(ws.id, ws.key);
      const answers = [await get(), await get(), await get(), await get()];
      expect(answers.map((a) => a.response.status)).toEqual([200, 200, 200, 429]);
      const header = (name: string) => answers.map((a) => a.response.headers.get(name));
      expect(header("ratelimit-remaining")).toEqual(["2", "1", "0", "0"]);
      expect(header("ratelimit-limit")[0]).toBe("3");
      const refused = answers[3];
      expect(refused?.error).toMatchObject({ status: 429, code: "rate_limited" });
      const retryAfter = Number(refused?.response.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThan(0);
      // The window, and the time left in it: each named for what it is.
      const detail = (refused?.error as { detail?: string } | undefined)?.detail;
      expect(detail).toBe(
        `This API key sent more than 3 requests in a minute; retry in ${retryAfter} second${retryAfter === 1 ? "" : "s"}.`,
      );
    } finally {
      await limited.app.close();
    }
  });

  it("keeps each API key's count to itself", async ({ server, admin, ws }) => {
    const limited = await limitedServer(server.store);
    try {
      for (let i = 0; i < 4; i++) await limited.list(ws.id, ws.key);
      const second = await admin.POST("/v0/workspaces/{workspaceId}/api-keys", {
        params: { path: { workspaceId: ws.id } },
        body: { name: "second" },
      });
      expect((await limited.list(ws.id, second.key)).response.status).toBe(200);
    } finally {
      await limited.app.close();
    }
  });

  it("does not limit the probes", async ({ server }) => {
    const limited = await limitedServer(server.store);
    try {
      const anonymous = checkedClient(limited.baseUrl, undefined);
      for (let i = 0; i < 5; i++) expect((await anonymous.raw.GET("/healthz")).response.status).toBe(200);
    } finally {
      await limited.app.close();
    }
  });

  // Each process counts its own requests exactly, adds them to the shared counts every 0.1 s and
  // learns the other processes' totals in return.
  it.runIf(process.env.TEST_DATABASE_URL)(
    "shares each API key's count between processes on PostgreSQL",
    async ({ server, ws }) => {
      const first = await limitedServer(server.store);
      const second = await limitedServer(server.store);
      const reported = () => reportedRequests(server.store, ws.id);
      try {
        const statuses = [await first.list(ws.id, ws.key), await first.list(ws.id, ws.key)].map((a) => a.response);
        expect(statuses.map((r) => r.status)).toEqual([200, 200]);
        await expect.poll(reported, { timeout: 10_000 }).toBe(2);
        // Until its own first report, the second process knows only its own requests.
        const { response } = await second.list(ws.id, ws.key);
        expect([response.status, response.headers.get("ratelimit-remaining")]).toEqual([200, "2"]);
        // Its report adds its one request to the first process's two, and answers it the total.
        await expect.poll(reported, { timeout: 10_000 }).toBe(3);
        // Now it knows of the first process's two: 2 + 1 + this one is over the limit of 3.
        expect((await second.list(ws.id, ws.key)).response.status).toBe(429);
      } finally {
        await Promise.all([first.app.close(), second.app.close()]);
      }
    },
  );
});

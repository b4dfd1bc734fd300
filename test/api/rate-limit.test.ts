import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/app.ts";
import { createAdminService } from "../../src/services/admin-service.ts";
import { createAuthService } from "../../src/services/auth-service.ts";
import type { Store } from "../../src/store/database.ts";
import { checkResponse } from "../support/contract.ts";
import { type LiveServer, startLiveServer } from "../support/live-server.ts";

let server: LiveServer;
let store: Store;

beforeAll(async () => {
  server = await startLiveServer();
  store = server.store;
});
afterAll(() => server.close());

/**
 * Another application on the same store, with a limit of 3 requests per minute per API key: for a
 * new API key, or for the given one (a second server process, as behind a load balancer).
 */
async function limitedApp(shared?: { workspace: { id: string }; key: { key: string } }) {
  const app = await buildApp({ store, adminToken: "limit-test-admin-token", rateLimit: { max: 3, windowMs: 60_000 } });
  const admin = createAdminService({ store, auth: createAuthService({ store }) });
  const workspace = shared?.workspace ?? (await admin.createWorkspace("Rate limited"));
  const key = shared?.key ?? (await admin.createApiKey(workspace.id, "limited"));
  const get = async (token = key.key) => {
    const url = `/v0/workspaces/${workspace.id}/audiences`;
    const response = await app.inject({ method: "GET", url, headers: { authorization: `Bearer ${token}` } });
    const headers = Object.fromEntries(Object.entries(response.headers).map(([name, value]) => [name, String(value)]));
    checkResponse({ method: "GET", url, status: response.statusCode, headers, body: response.body });
    return response;
  };
  return { app, admin, workspace, key, get };
}

describe("rate limiting per API key", () => {
  it("counts down in RateLimit headers, then answers 429 rate_limited with Retry-After", async () => {
    const { app, get } = await limitedApp();
    const answers = [await get(), await get(), await get(), await get()];
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 429]);
    expect(answers.map((a) => a.headers["ratelimit-remaining"])).toEqual(["2", "1", "0", "0"]);
    expect(answers[0]?.headers["ratelimit-limit"]).toBe("3");
    const limited = answers[3];
    expect(limited?.json()).toMatchObject({ status: 429, code: "rate_limited" });
    expect(Number(limited?.headers["retry-after"])).toBeGreaterThan(0);
    await app.close();
  });

  it("keeps each API key's count to itself", async () => {
    const { app, admin, workspace, get } = await limitedApp();
    for (let i = 0; i < 4; i++) await get();
    const second = await admin.createApiKey(workspace.id, "second");
    expect((await get(second.key)).statusCode).toBe(200);
    await app.close();
  });

  it("does not limit the probes", async () => {
    const { app } = await limitedApp();
    for (let i = 0; i < 5; i++) expect((await app.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
    await app.close();
  });

  // Each process counts its own requests exactly, adds them to the shared counts every 0.1 s and
  // learns the other processes' totals in return.
  it.runIf(process.env.TEST_DATABASE_URL)("shares each API key's count between processes on PostgreSQL", async () => {
    const first = await limitedApp();
    const second = await limitedApp(first);
    const settle = () => new Promise((resolve) => setTimeout(resolve, 1_000));
    try {
      expect([await first.get(), await first.get()].map((a) => a.statusCode)).toEqual([200, 200]);
      await settle();
      // Until its own first report, the second process knows only its own requests.
      const answer = await second.get();
      expect([answer.statusCode, answer.headers["ratelimit-remaining"]]).toEqual([200, "2"]);
      await settle();
      // Now it knows of the first process's two: 2 + 1 + this one is over the limit of 3.
      expect((await second.get()).statusCode).toBe(429);
    } finally {
      await Promise.all([first.app.close(), second.app.close()]);
    }
  });
});

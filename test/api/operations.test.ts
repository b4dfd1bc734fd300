import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/app.ts";
import { openStore } from "../../src/store/database.ts";
import { call, type LiveServer, startLiveServer } from "../support/live-server.ts";

let server: LiveServer;

beforeAll(async () => {
  server = await startLiveServer();
});
afterAll(() => server.close());

describe("probes", () => {
  it("answer without credentials when the process and the database are up", async () => {
    const health = await call(server, "GET", "/healthz");
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: "ok" });
    const ready = await call(server, "GET", "/readyz");
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: "ready" });
  });

  it("report not ready, with 503 service_unavailable, once the database is gone", async () => {
    const store = await openStore({});
    const app = await buildApp({ store });
    await store.close();
    const ready = await app.inject({ method: "GET", url: "/readyz" });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toMatchObject({ status: 503, code: "service_unavailable" });
    const health = await app.inject({ method: "GET", url: "/healthz" });
    expect(health.json()).toEqual({ status: "ok" });
    await app.close();
  });
});

describe("request ids", () => {
  it("come back on every response, and match the problem document's requestId", async () => {
    const ok = await call(server, "GET", "/healthz");
    expect(ok.headers.get("x-request-id")).toMatch(/^req_[0-9A-Za-z]{16}$/);
    const problem = await call(server, "GET", "/v0/unknown");
    expect(problem.headers.get("x-request-id")).toBe(problem.body.requestId);
    const other = await call(server, "GET", "/healthz", { headers: { "x-request-id": "client-chosen" } });
    expect(other.headers.get("x-request-id")).toMatch(/^req_/);
  });
});

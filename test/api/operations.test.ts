import { describe, expect } from "vitest";
import { buildApp } from "../../src/app.ts";
import { openStore } from "../../src/platform/db/database.ts";
import { checkedClient } from "../support/checked-client.ts";
import { it } from "../support/fixture.ts";
import { call } from "../support/live-server.ts";

describe("probes", () => {
  it("answer without credentials when the process and the database are up", async ({ server }) => {
    const anonymous = checkedClient(server.baseUrl, undefined);
    expect(await anonymous.GET("/healthz")).toEqual({ status: "ok" });
    expect(await anonymous.GET("/readyz")).toEqual({ status: "ready" });
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
  it("come back on every response, and match the problem document's requestId", async ({ server }) => {
    const anonymous = checkedClient(server.baseUrl, undefined);
    const ok = await anonymous.raw.GET("/healthz");
    expect(ok.response.headers.get("x-request-id")).toMatch(/^req_[0-9A-Za-z]{16}$/);
    const problem = await call(server, "GET", "/v0/unknown");
    expect(problem.headers.get("x-request-id")).toBe(problem.problem?.requestId);
    const other = await anonymous.raw.GET("/healthz", { headers: { "x-request-id": "client-chosen" } });
    expect(other.response.headers.get("x-request-id")).toMatch(/^req_/);
  });
});

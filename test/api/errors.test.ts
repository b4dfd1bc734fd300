import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAudience, createWorkspace, type TestWorkspace } from "../support/factories.ts";
import { call, type LiveServer, startLiveServer } from "../support/live-server.ts";

let server: LiveServer;
let ws: TestWorkspace;
let audience: string;

beforeAll(async () => {
  server = await startLiveServer();
  ws = await createWorkspace(server);
  audience = await createAudience(ws);
});
afterAll(() => server.close());

describe("problem documents", () => {
  it("answer unknown routes with 404 route_not_found", async () => {
    const response = await call(server, "GET", "/v0/nothing-here");
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(response.body).toMatchObject({
      type: "urn:problem-type:audience-service:route_not_found",
      title: "Route not found",
      status: 404,
      code: "route_not_found",
    });
    expect(response.body.requestId).toMatch(/^req_/);
  });

  it("answer methods the contract does not have, HEAD included, with 404 route_not_found", async () => {
    for (const method of ["HEAD", "PUT", "PATCH"]) {
      const response = await fetch(`${server.baseUrl}/v0/workspaces/${ws.id}/audiences`, {
        method,
        headers: { authorization: `Bearer ${ws.key}` },
      });
      expect(response.status, method).toBe(404);
    }
  });

  it("carry every validation error's pointer and a readable detail", async () => {
    const response = await ws.call("POST", `/audiences/${audience}/members`, { body: { memberIds: "m1" } });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      type: "urn:problem-type:audience-service:invalid_request",
      title: "Invalid request",
      status: 400,
      code: "invalid_request",
      detail: "/body/memberIds must be array",
      errors: [{ pointer: "/body/memberIds", message: "must be array" }],
    });
  });

  it.each([
    ["an empty JSON body", "", "malformed_json"],
    ["a JSON array", "[]", "invalid_request"],
    ["a JSON string", '"name"', "invalid_request"],
    ["null", "null", "invalid_request"],
    ["a prototype-polluting key", '{"name":"x","__proto__":{"admin":true}}', "malformed_json"],
    ["a constructor-polluting key", '{"name":"x","constructor":{"prototype":{"admin":true}}}', "malformed_json"],
    ["deeply nested JSON", `${"[".repeat(5000)}${"]".repeat(5000)}`, "invalid_request"],
  ])("answer %s with 400", async (_case, rawBody, code) => {
    const response = await ws.call("POST", "/audiences", { rawBody, headers: { "content-type": "application/json" } });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe(code);
  });

  it("never answer 5xx for SQL-looking or unusual input, and store it verbatim", async () => {
    const names = ["Robert'); DROP TABLE audiences;--", "%_\\", "名前 🎉", "\u202Eevil", "a\u2028b"];
    for (const name of names) {
      const created = await ws.call("POST", "/audiences", { body: { name } });
      expect(created.status).toBe(201);
      expect((await ws.call("GET", `/audiences/${created.body.id}`)).body.name).toBe(name);
    }
    const ids = ["x' OR '1'='1", "$1", "🎉", "a".repeat(255)];
    const added = await ws.call("POST", `/audiences/${audience}/members`, { body: { memberIds: ids } });
    expect(added.status).toBe(200);
    expect(added.body.added).toBe(4);
  });

  it("answer a query string with repeated or odd parameters with 400, not 500", async () => {
    for (const query of ["limit=1&limit=2", "limit=1e3", "limit=-1", "after=%00", "search=%FF"]) {
      const response = await ws.call("GET", `/audiences/${audience}/members?${query}`);
      expect(response.status, query).toBeGreaterThanOrEqual(200);
      expect(response.status, query).toBeLessThan(500);
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAudience, createWorkspace, type TestWorkspace } from "../support/factories.ts";
import { ADMIN_TOKEN, call, type LiveServer, startLiveServer } from "../support/live-server.ts";

let server: LiveServer;
let ws: TestWorkspace;

beforeAll(async () => {
  server = await startLiveServer();
  ws = await createWorkspace(server);
});
afterAll(() => server.close());

describe("workspace API keys", () => {
  it.each([
    ["no Authorization header", undefined],
    ["a malformed key", "not-a-key"],
    ["a well-formed but unknown key", "ak_AAAAAAAAAAAAAAAAAAAA_BBBBBBBBBBBBBBBBBBBB_CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"],
    ["the admin token", ADMIN_TOKEN],
  ])("answer 401 unauthorized with %s", async (_case, token) => {
    const response = await call(server, "GET", `/v0/workspaces/${ws.id}/audiences`, { token });
    expect(response.status).toBe(401);
    expect(response.body.code).toBe("unauthorized");
  });

  it("answer 401 before looking at the body", async () => {
    const response = await call(server, "POST", `/v0/workspaces/${ws.id}/audiences`, {
      rawBody: "{not json",
      headers: { "content-type": "application/json" },
    });
    expect(response.status).toBe(401);
  });

  it("answer 401 with a key whose secret is wrong", async () => {
    const forged = `${ws.key.slice(0, -4)}AAAA`;
    const response = await call(server, "GET", `/v0/workspaces/${ws.id}/audiences`, { token: forged });
    expect(response.status).toBe(401);
  });

  it("answer 403 forbidden on another workspace's path, and write nothing there", async () => {
    const other = await createWorkspace(server);
    const response = await call(server, "POST", `/v0/workspaces/${other.id}/audiences`, {
      token: ws.key,
      body: { name: "Intruder" },
    });
    expect(response.status).toBe(403);
    expect(response.body.code).toBe("forbidden");
    expect((await other.call("GET", "/audiences")).body.results).toEqual([]);
  });

  it("stop working once revoked, and revoking twice succeeds", async () => {
    const key = await call(server, "POST", `/v0/workspaces/${ws.id}/api-keys`, { token: ADMIN_TOKEN });
    expect(key.status).toBe(201);
    expect(key.body.name).toBe("default");
    expect(key.body.key).toMatch(/^ak_/);
    const use = () => call(server, "GET", `/v0/workspaces/${ws.id}/audiences`, { token: key.body.key });
    expect((await use()).status).toBe(200);
    const revoke = () =>
      call(server, "DELETE", `/v0/workspaces/${ws.id}/api-keys/${key.body.id}`, { token: ADMIN_TOKEN });
    expect((await revoke()).status).toBe(204);
    expect((await revoke()).status).toBe(204);
    expect((await use()).status).toBe(401);
    expect((await ws.call("GET", "/audiences")).status).toBe(200);
  });
});

describe("admin operations", () => {
  it("create and list workspaces with the admin token only", async () => {
    const created = await call(server, "POST", "/v0/workspaces", { token: ADMIN_TOKEN, body: { name: "  Acme  " } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: "Acme" });
    expect(created.body.id).toMatch(/^ws_[0-9A-Za-z]{20}$/);
    const list = await call(server, "GET", "/v0/workspaces", { token: ADMIN_TOKEN });
    expect(list.body.results).toContainEqual(created.body);
    const denied = await call(server, "GET", "/v0/workspaces", { token: ws.key });
    expect(denied.status).toBe(401);
  });

  it("answer 404 for keys of an unknown workspace or an unknown key", async () => {
    const key = await call(server, "POST", "/v0/workspaces/ws_unknown/api-keys", { token: ADMIN_TOKEN, body: {} });
    expect(key.status).toBe(404);
    expect(key.body.code).toBe("workspace_not_found");
    const revoke = await call(server, "DELETE", `/v0/workspaces/${ws.id}/api-keys/key_unknown`, { token: ADMIN_TOKEN });
    expect(revoke.status).toBe(404);
    expect(revoke.body.code).toBe("api_key_not_found");
  });

  it("keep a key usable only for its own workspace's audiences", async () => {
    const other = await createWorkspace(server);
    const theirs = await createAudience(other);
    const response = await ws.call("GET", `/audiences/${theirs}/members`);
    expect(response.status).toBe(404);
  });
});

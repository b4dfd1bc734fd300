import { describe, expect } from "vitest";
import { checkedClient, rejectionOf } from "../support/checked-client.ts";
import { createAudience, createWorkspace } from "../support/factories.ts";
import { it } from "../support/fixture.ts";
import { ADMIN_TOKEN, call, urlOf } from "../support/live-server.ts";

const AUDIENCES = "/v0/workspaces/{workspaceId}/audiences";
const KEY = "/v0/workspaces/{workspaceId}/api-keys/{keyId}";

describe("workspace API keys", () => {
  it.for([
    ["no Authorization header", undefined],
    ["a malformed key", "not-a-key"],
    ["a well-formed but unknown key", "ak_AAAAAAAAAAAAAAAAAAAA_BBBBBBBBBBBBBBBBBBBB_CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"],
    ["the admin token", ADMIN_TOKEN],
  ] as const)("answer 401 unauthorized with %s", async ([_case, token], { server, workspaceId }) => {
    const api = checkedClient(server.baseUrl, token);
    const error = await rejectionOf(api.GET(AUDIENCES, { params: { path: { workspaceId } } }));
    expect(error.status).toBe(401);
    expect(error.code).toBe("unauthorized");
  });

  it("answer 401 before looking at the body", async ({ server, workspaceId }) => {
    const response = await call(server, "POST", urlOf(AUDIENCES, { workspaceId }), {
      rawBody: "{not json",
      headers: { "content-type": "application/json" },
    });
    expect(response.status).toBe(401);
  });

  it("answer 401 with a key whose secret is wrong", async ({ server, ws }) => {
    const forged = checkedClient(server.baseUrl, `${ws.key.slice(0, -4)}AAAA`);
    const error = await rejectionOf(forged.GET(AUDIENCES, { params: { path: { workspaceId: ws.id } } }));
    expect(error.status).toBe(401);
  });

  it("answer 403 forbidden on another workspace's path, and write nothing there", async ({ server, api }) => {
    const other = await createWorkspace(server);
    const path = { workspaceId: other.id };
    const error = await rejectionOf(api.POST(AUDIENCES, { params: { path }, body: { name: "Intruder" } }));
    expect(error.status).toBe(403);
    expect(error.code).toBe("forbidden");
    expect((await other.api.GET(AUDIENCES, { params: { path } })).results).toEqual([]);
  });

  it("stop working once revoked, and revoking twice succeeds", async ({ server, admin, api, workspaceId }) => {
    const key = await admin.POST("/v0/workspaces/{workspaceId}/api-keys", { params: { path: { workspaceId } } });
    expect(key.name).toBe("default");
    expect(key.key).toMatch(/^ak_/);
    const use = () => checkedClient(server.baseUrl, key.key).GET(AUDIENCES, { params: { path: { workspaceId } } });
    await expect(use()).resolves.toEqual({ results: [] });
    const revoke = () => admin.DELETE(KEY, { params: { path: { workspaceId, keyId: key.id } } });
    expect(await revoke()).toBeUndefined();
    expect(await revoke()).toBeUndefined();
    expect((await rejectionOf(use())).status).toBe(401);
    await expect(api.GET(AUDIENCES, { params: { path: { workspaceId } } })).resolves.toEqual({ results: [] });
  });
});

describe("admin operations", () => {
  it("create and list workspaces with the admin token only", async ({ admin, api }) => {
    const created = await admin.POST("/v0/workspaces", { body: { name: "  Acme  " } });
    expect(created).toMatchObject({ name: "Acme" });
    expect(created.id).toMatch(/^ws_[0-9A-Za-z]{20}$/);
    const list = await admin.GET("/v0/workspaces");
    expect(list.results).toContainEqual(created);
    const denied = await rejectionOf(api.GET("/v0/workspaces"));
    expect(denied.status).toBe(401);
  });

  it("answer 404 for keys of an unknown workspace or an unknown key", async ({ admin, workspaceId }) => {
    const key = await rejectionOf(
      admin.POST("/v0/workspaces/{workspaceId}/api-keys", {
        params: { path: { workspaceId: "ws_unknown" } },
        body: {},
      }),
    );
    expect(key.status).toBe(404);
    expect(key.code).toBe("workspace_not_found");
    const revoke = await rejectionOf(admin.DELETE(KEY, { params: { path: { workspaceId, keyId: "key_unknown" } } }));
    expect(revoke.status).toBe(404);
    expect(revoke.code).toBe("api_key_not_found");
  });

  it("keep a key usable only for its own workspace's audiences", async ({ server, api, workspaceId }) => {
    const theirs = await createAudience(await createWorkspace(server));
    const error = await rejectionOf(
      api.GET(`${AUDIENCES}/{audienceId}/members`, { params: { path: { workspaceId, audienceId: theirs } } }),
    );
    expect(error.status).toBe(404);
  });
});

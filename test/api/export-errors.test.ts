import { describe, expect } from "vitest";
import { addMembers, createAudience, createWorkspace } from "../support/factories.ts";
import { it } from "../support/fixture.ts";
import { call, urlOf } from "../support/live-server.ts";

const AUDIENCE_MEMBERS = "/v0/workspaces/{workspaceId}/audiences/{audienceId}/members";
const MEMBERS = "/v0/workspaces/{workspaceId}/members";
const FILES = ["text/csv", "application/x-ndjson"];

describe("member files: refusals are problem documents", () => {
  it.for(
    FILES.flatMap((accept) => [
      [accept, "limit=10", "/query/limit"],
      [accept, "limit=30&sortDirection=DESC", "/query/limit"],
      [accept, "after=abc", "/query/after"],
      [accept, "before=abc", "/query/before"],
    ]),
  )("%s with %s → 400 invalid_request at %s", async ([accept, query, pointer], { server, ws }) => {
    const audienceId = await createAudience(ws);
    for (const url of [
      urlOf(AUDIENCE_MEMBERS, { workspaceId: ws.id, audienceId }, query),
      urlOf(MEMBERS, { workspaceId: ws.id }, query),
    ]) {
      const res = await call(server, "GET", url, { token: ws.key, headers: { accept: accept as string } });
      expect(res.status).toBe(400);
      expect(res.problem?.code).toBe("invalid_request");
      expect(res.problem?.errors?.[0]?.pointer).toBe(pointer);
    }
  });

  it("pages as before with the same parameters and a JSON Accept", async ({ server, ws }) => {
    const audienceId = await createAudience(ws);
    await addMembers(ws, audienceId, { memberIds: ["a", "b"] });
    const url = urlOf(AUDIENCE_MEMBERS, { workspaceId: ws.id, audienceId }, "limit=1");
    const res = await call(server, "GET", url, { token: ws.key, headers: { accept: "application/json" } });
    expect(res.data?.results.map((m) => m.id)).toEqual(["b"]);
  });

  it.for(FILES)("%s of an unknown audience → 404 audience_not_found", async (accept, { server, ws }) => {
    const headers = { accept };
    const byPath = urlOf(AUDIENCE_MEMBERS, { workspaceId: ws.id, audienceId: "aud_nope" });
    const byQuery = urlOf(MEMBERS, { workspaceId: ws.id }, "audienceId=aud_nope");
    for (const url of [byPath, byQuery]) {
      const res = await call(server, "GET", url, { token: ws.key, headers });
      expect(res.status).toBe(404);
      expect(res.problem?.code).toBe("audience_not_found");
    }
  });

  it.for(FILES)("%s without a key → 401, with another workspace's → 403", async (accept, { server, ws }) => {
    const other = await createWorkspace(server);
    const audienceId = await createAudience(other);
    const url = urlOf(AUDIENCE_MEMBERS, { workspaceId: other.id, audienceId });
    const anonymous = await call(server, "GET", url, { headers: { accept } });
    expect([anonymous.status, anonymous.problem?.code]).toEqual([401, "unauthorized"]);
    const intruder = await call(server, "GET", url, { token: ws.key, headers: { accept } });
    expect([intruder.status, intruder.problem?.code]).toEqual([403, "forbidden"]);
  });
});

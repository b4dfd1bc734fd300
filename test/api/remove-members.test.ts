import { describe, expect } from "vitest";
import { rejectionOf } from "../support/checked-client.ts";
import { addMembers, allMemberIds, createAudience, type TestWorkspace } from "../support/factories.ts";
import { it } from "../support/fixture.ts";
import { call, urlOf } from "../support/live-server.ts";

const MEMBERS = "/v0/workspaces/{workspaceId}/audiences/{audienceId}/members";

const remove = (ws: TestWorkspace, audienceId: string, memberIds: string[]) =>
  ws.api.DELETE(MEMBERS, { params: { path: { workspaceId: ws.id, audienceId } }, body: { memberIds } });
const firstPage = (ws: TestWorkspace, audienceId: string) =>
  ws.api.GET(MEMBERS, { params: { path: { workspaceId: ws.id, audienceId } } });

describe("removeAudienceMembers", () => {
  it("removes the members from the audience only, and counts ids that were not members", async ({ ws }) => {
    const audience = await createAudience(ws);
    const other = await createAudience(ws);
    await addMembers(ws, audience, { memberIds: ["r1", "r2", "r3"] });
    await addMembers(ws, other, { memberIds: ["r1"] });

    expect(await remove(ws, audience, ["r1", "r2", "r2", "never-seen"])).toEqual({ removed: 2, notMembers: 1 });
    expect(await allMemberIds(ws, audience)).toEqual(["r3"]);
    expect(await allMemberIds(ws, other)).toEqual(["r1"]);
    expect((await firstPage(ws, audience)).totalCount).toBe(1);
  });

  it("keeps removed members in the workspace, so adding them back does not create them", async ({ ws }) => {
    const audience = await createAudience(ws);
    await addMembers(ws, audience, {
      members: [{ id: "back", email: "back@example.com", fields: { firstName: "B" } }],
    });
    await remove(ws, audience, ["back"]);
    expect(await addMembers(ws, audience, { memberIds: ["back"] })).toEqual({
      added: 1,
      alreadyMembers: 0,
      created: 0,
      merged: 0,
    });
    const page = await firstPage(ws, audience);
    expect(page.results[0]).toMatchObject({ id: "back", email: "back@example.com", fields: { firstName: "B" } });
  });

  // Bodies the contract refuses, so the typed SDK cannot send them.
  it.for([
    ["no body", undefined],
    ["no memberIds", {}],
    ["an empty list", { memberIds: [] }],
    ["a list of numbers", { memberIds: [1, 2] }],
  ] as const)("answers 400 for %s", async ([_case, body], { ws, server }) => {
    const audienceId = await createAudience(ws);
    const url = urlOf(MEMBERS, { workspaceId: ws.id, audienceId });
    const response = await call(server, "DELETE", url, { token: ws.key, body });
    expect(response.status).toBe(400);
    expect(response.problem?.code).toBe("invalid_request");
  });

  it("answers 404 for an unknown audience", async ({ ws }) => {
    expect((await rejectionOf(remove(ws, "aud_nope", ["x"]))).status).toBe(404);
  });
});

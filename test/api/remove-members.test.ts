import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMembers, allMemberIds, createAudience, createWorkspace, type TestWorkspace } from "../support/factories.ts";
import { type LiveServer, startLiveServer } from "../support/live-server.ts";

let server: LiveServer;
let ws: TestWorkspace;

beforeAll(async () => {
  server = await startLiveServer();
  ws = await createWorkspace(server);
});
afterAll(() => server.close());

describe("removeAudienceMembers", () => {
  it("removes the members from the audience only, and counts ids that were not members", async () => {
    const audience = await createAudience(ws);
    const other = await createAudience(ws);
    await addMembers(ws, audience, { memberIds: ["r1", "r2", "r3"] });
    await addMembers(ws, other, { memberIds: ["r1"] });

    const response = await ws.call("DELETE", `/audiences/${audience}/members`, {
      body: { memberIds: ["r1", "r2", "r2", "never-seen"] },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ removed: 2, notMembers: 1 });
    expect(await allMemberIds(ws, audience)).toEqual(["r3"]);
    expect(await allMemberIds(ws, other)).toEqual(["r1"]);
    const page = await ws.call("GET", `/audiences/${audience}/members`);
    expect(page.body.totalCount).toBe(1);
  });

  it("keeps removed members in the workspace, so adding them back does not create them", async () => {
    const audience = await createAudience(ws);
    await addMembers(ws, audience, {
      members: [{ id: "back", email: "back@example.com", fields: { firstName: "B" } }],
    });
    await ws.call("DELETE", `/audiences/${audience}/members`, { body: { memberIds: ["back"] } });
    expect(await addMembers(ws, audience, { memberIds: ["back"] })).toEqual({
      added: 1,
      alreadyMembers: 0,
      created: 0,
      merged: 0,
    });
    const page = await ws.call("GET", `/audiences/${audience}/members`);
    expect(page.body.results[0]).toMatchObject({ id: "back", email: "back@example.com", fields: { firstName: "B" } });
  });

  it.each([
    ["no body", undefined],
    ["no memberIds", {}],
    ["an empty list", { memberIds: [] }],
    ["a list of numbers", { memberIds: [1, 2] }],
  ])("answers 400 for %s", async (_case, body) => {
    const audience = await createAudience(ws);
    const response = await ws.call("DELETE", `/audiences/${audience}/members`, body === undefined ? {} : { body });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe("invalid_request");
  });

  it("answers 404 for an unknown audience", async () => {
    const response = await ws.call("DELETE", "/audiences/aud_nope/members", { body: { memberIds: ["x"] } });
    expect(response.status).toBe(404);
  });
});

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

const listedIds = async (query = "") =>
  (await ws.call("GET", `/audiences${query}`)).body.results.map((a: { id: string }) => a.id);

describe("archiveAudience", () => {
  it("answers 204 with no body, twice, and hides the audience from the default listing", async () => {
    const id = await createAudience(ws);
    const first = await ws.call("DELETE", `/audiences/${id}`);
    expect(first.status).toBe(204);
    expect(first.text).toBe("");
    const second = await ws.call("DELETE", `/audiences/${id}`);
    expect(second.status).toBe(204);
    expect(await listedIds()).not.toContain(id);
    const all = await ws.call("GET", "/audiences?includeArchived=true");
    expect(all.body.results.find((a: { id: string }) => a.id === id)).toMatchObject({ id, isArchived: true });
  });

  it("keeps the members and makes the audience read-only", async () => {
    const id = await createAudience(ws);
    const other = await createAudience(ws);
    await addMembers(ws, id, { memberIds: ["a1", "a2"] });
    await ws.call("DELETE", `/audiences/${id}`);

    expect((await allMemberIds(ws, id)).sort()).toEqual(["a1", "a2"]);
    const attempts = [
      await ws.call("POST", `/audiences/${id}/members`, { body: { memberIds: ["a3"] } }),
      await ws.call("DELETE", `/audiences/${id}/members`, { body: { memberIds: ["a1"] } }),
      await ws.call("POST", "/audiences/merge", { body: { name: "Merged", audienceIds: [id, other] } }),
    ];
    for (const attempt of attempts) {
      expect(attempt.status).toBe(409);
      expect(attempt.body.code).toBe("audience_archived");
    }
    expect((await allMemberIds(ws, id)).sort()).toEqual(["a1", "a2"]);
  });

  it("frees the name for a new audience", async () => {
    const id = await createAudience(ws, "Seasonal");
    await ws.call("DELETE", `/audiences/${id}`);
    const again = await ws.call("POST", "/audiences", { body: { name: "seasonal" } });
    expect(again.status).toBe(201);
  });

  it("answers 404 for an unknown audience", async () => {
    const response = await ws.call("DELETE", "/audiences/aud_unknown");
    expect(response.status).toBe(404);
    expect(response.body.code).toBe("audience_not_found");
  });
});

describe("restoreAudience", () => {
  it("brings an archived audience back with its members", async () => {
    const id = await createAudience(ws, "Comeback");
    await addMembers(ws, id, { memberIds: ["r1"] });
    await ws.call("DELETE", `/audiences/${id}`);
    const restored = await ws.call("POST", `/audiences/${id}/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body).toEqual({ id, name: "Comeback" });
    expect(await listedIds()).toContain(id);
    const added = await ws.call("POST", `/audiences/${id}/members`, { body: { memberIds: ["r2"] } });
    expect(added.status).toBe(200);
    expect((await allMemberIds(ws, id)).sort()).toEqual(["r1", "r2"]);
  });

  it("answers 409 audience_name_taken when its name was reused meanwhile, and stays archived", async () => {
    const id = await createAudience(ws, "Reused");
    await ws.call("DELETE", `/audiences/${id}`);
    await createAudience(ws, "REUSED");
    const restored = await ws.call("POST", `/audiences/${id}/restore`);
    expect(restored.status).toBe(409);
    expect(restored.body.code).toBe("audience_name_taken");
    expect(await listedIds()).not.toContain(id);
  });

  it("changes nothing for an unarchived audience", async () => {
    const id = await createAudience(ws, "Active");
    const restored = await ws.call("POST", `/audiences/${id}/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body).toEqual({ id, name: "Active" });
  });
});

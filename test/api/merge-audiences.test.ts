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

const merge = (body: object) => ws.call("POST", "/audiences/merge", { body });

describe("mergeAudiences", () => {
  it("creates a new audience holding the union of both, leaving the sources unchanged", async () => {
    const a = await createAudience(ws);
    const b = await createAudience(ws);
    await addMembers(ws, a, { memberIds: ["m1", "m2", "m3"] });
    await addMembers(ws, b, { memberIds: ["m3", "m4"] });

    const response = await merge({ name: "Everyone", audienceIds: [a, b] });
    expect(response.status).toBe(201);
    expect(Object.keys(response.body)).toEqual(["id"]);
    const merged = response.body.id;
    expect(merged).not.toBe(a);
    expect((await ws.call("GET", `/audiences/${merged}`)).body).toEqual({ id: merged, name: "Everyone" });
    expect((await allMemberIds(ws, merged)).sort()).toEqual(["m1", "m2", "m3", "m4"]);
    expect((await ws.call("GET", `/audiences/${merged}/members`)).body.totalCount).toBe(4);
    expect((await allMemberIds(ws, a)).sort()).toEqual(["m1", "m2", "m3"]);
    expect((await allMemberIds(ws, b)).sort()).toEqual(["m3", "m4"]);
  });

  it("gives a merged audience that is independent of its sources afterwards", async () => {
    const a = await createAudience(ws);
    const b = await createAudience(ws);
    await addMembers(ws, a, { memberIds: ["i1"] });
    const merged = (await merge({ name: "Independent", audienceIds: [a, b] })).body.id;
    await addMembers(ws, a, { memberIds: ["i2"] });
    await ws.call("DELETE", `/audiences/${merged}/members`, { body: { memberIds: ["i1"] } });
    expect(await allMemberIds(ws, merged)).toEqual([]);
    expect((await allMemberIds(ws, a)).sort()).toEqual(["i1", "i2"]);
  });

  it("answers 409 when the new name is taken, and creates nothing", async () => {
    const a = await createAudience(ws, "Taken name");
    const b = await createAudience(ws);
    const response = await merge({ name: "taken NAME", audienceIds: [a, b] });
    expect(response.status).toBe(409);
    expect(response.body.code).toBe("audience_name_taken");
  });

  it("answers 400 for the same audience twice", async () => {
    const a = await createAudience(ws);
    const response = await merge({ name: "Twice", audienceIds: [a, a] });
    expect(response.status).toBe(400);
    expect(response.body.errors[0].pointer).toBe("/body/audienceIds");
  });

  it.each([[1], [3]])("answers 400 for %i audience ids", async (count) => {
    const ids = await Promise.all(Array.from({ length: count }, () => createAudience(ws)));
    const response = await merge({ name: `Count ${count}`, audienceIds: ids });
    expect(response.status).toBe(400);
    expect(response.body.errors[0].pointer).toBe("/body/audienceIds");
  });

  it("answers 404 for an unknown or foreign source, and creates nothing", async () => {
    const a = await createAudience(ws);
    const other = await createWorkspace(server);
    const foreign = await createAudience(other);
    for (const missing of ["aud_missing", foreign]) {
      const response = await merge({ name: "Never", audienceIds: [a, missing] });
      expect(response.status).toBe(404);
      expect(response.body.code).toBe("audience_not_found");
    }
    const list = await ws.call("GET", "/audiences?search=never");
    expect(list.body.results).toEqual([]);
  });

  it("answers 409 audience_archived when a source is archived", async () => {
    const a = await createAudience(ws);
    const b = await createAudience(ws);
    await ws.call("DELETE", `/audiences/${b}`);
    const response = await merge({ name: "With archived", audienceIds: [a, b] });
    expect(response.status).toBe(409);
    expect(response.body.code).toBe("audience_archived");
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAudience, createWorkspace, type TestWorkspace } from "../support/factories.ts";
import { type LiveServer, startLiveServer } from "../support/live-server.ts";

let server: LiveServer;
let ws: TestWorkspace;
const ids: string[] = [];

beforeAll(async () => {
  server = await startLiveServer();
  ws = await createWorkspace(server);
  for (const name of ["Alpha readers", "Beta testers", "Gamma 100% fans", "Delta readers"]) {
    ids.push(await createAudience(ws, name));
  }
  await ws.call("DELETE", `/audiences/${ids[3]}`);
});
afterAll(() => server.close());

const names = (body: { results: { name: string }[] }) => body.results.map((a) => a.name);

describe("listAudiences", () => {
  it("answers unarchived audiences, most recent first, with exactly id, createdAt, name and isArchived", async () => {
    const response = await ws.call("GET", "/audiences");
    expect(response.status).toBe(200);
    expect(names(response.body)).toEqual(["Gamma 100% fans", "Beta testers", "Alpha readers"]);
    const first = response.body.results[0];
    expect(Object.keys(first).sort()).toEqual(["createdAt", "id", "isArchived", "name"]);
    expect(first).toMatchObject({ id: ids[2], isArchived: false });
    expect(new Date(first.createdAt).toISOString()).toBe(first.createdAt);
  });

  it("orders oldest first with sortDirection=ASC", async () => {
    const response = await ws.call("GET", "/audiences?sortDirection=ASC");
    expect(names(response.body)).toEqual(["Alpha readers", "Beta testers", "Gamma 100% fans"]);
  });

  it("includes archived audiences with includeArchived=true", async () => {
    const response = await ws.call("GET", "/audiences?includeArchived=true");
    expect(names(response.body)).toEqual(["Delta readers", "Gamma 100% fans", "Beta testers", "Alpha readers"]);
    expect(response.body.results[0].isArchived).toBe(true);
  });

  it("filters by a case-insensitive search term, wildcards included literally", async () => {
    expect(names((await ws.call("GET", "/audiences?search=READERS")).body)).toEqual(["Alpha readers"]);
    expect(names((await ws.call("GET", "/audiences?search=100%25")).body)).toEqual(["Gamma 100% fans"]);
    expect(names((await ws.call("GET", "/audiences?search=_")).body)).toEqual([]);
  });

  it("answers only the workspace's own audiences", async () => {
    const other = await createWorkspace(server);
    await createAudience(other, "Elsewhere");
    const response = await ws.call("GET", "/audiences?includeArchived=true");
    expect(names(response.body)).not.toContain("Elsewhere");
  });

  it.each([
    ["sortDirection=UP", "/query/sortDirection"],
    ["includeArchived=maybe", "/query/includeArchived"],
    [`search=${"s".repeat(201)}`, "/query/search"],
  ])("answers 400 for %s", async (query, pointer) => {
    const response = await ws.call("GET", `/audiences?${query}`);
    expect(response.status).toBe(400);
    expect(response.body.errors[0].pointer).toBe(pointer);
  });
});

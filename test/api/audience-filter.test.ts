import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMembers, allMemberIds, createAudience, createWorkspace, type TestWorkspace } from "../support/factories.ts";
import { type LiveServer, startLiveServer } from "../support/live-server.ts";

let server: LiveServer;
let ws: TestWorkspace;

beforeAll(async () => {
  server = await startLiveServer();
  ws = await createWorkspace(server);
  await ws.call("POST", "/members", {
    body: {
      members: [
        { id: "ada", email: "ada@acme.com", fields: { company: "Acme", role: "Engineer" } },
        { id: "bob", email: "bob@initech.com", alternativeEmails: ["bob@ACME.com"], fields: { company: "Initech" } },
        { id: "cy", email: "cy@example.org", fields: { company: "ÄRGER GmbH" } },
      ],
    },
  });
});
afterAll(() => server.close());

const setFilter = (audience: string, filter: unknown) =>
  ws.call("PUT", `/audiences/${audience}/filter`, { body: { filter } });

describe("audience filters", () => {
  it("start null, match nobody, and take effect in the response that sets them", async () => {
    const audience = await createAudience(ws);
    expect((await ws.call("GET", `/audiences/${audience}/filter`)).body).toEqual({ filter: null, memberCount: 0 });
    const filter = { field: "fields.company", op: "eq", value: "ACME" };
    const set = await setFilter(audience, filter);
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ filter, memberCount: 1 });
    expect(await allMemberIds(ws, audience)).toEqual(["ada"]);
    expect((await ws.call("GET", `/audiences/${audience}/filter`)).body).toEqual({ filter, memberCount: 1 });
  });

  it("compare case-insensitively, beyond ASCII too, and match any e-mail with anyEmail", async () => {
    const audience = await createAudience(ws);
    await setFilter(audience, {
      any: [
        { field: "anyEmail", op: "endsWith", value: "@acme.com" },
        { field: "fields.company", op: "startsWith", value: "ärger" },
      ],
    });
    expect((await allMemberIds(ws, audience)).sort()).toEqual(["ada", "bob", "cy"]);
    await setFilter(audience, { field: "email", op: "endsWith", value: "@ACME.COM" });
    expect(await allMemberIds(ws, audience)).toEqual(["ada"]);
  });

  it("follow member changes in the request that makes them, through either API", async () => {
    const audience = await createAudience(ws);
    await setFilter(audience, { field: "fields.role", op: "eq", value: "engineer" });
    expect(await allMemberIds(ws, audience)).toEqual(["ada"]);
    await ws.call("PATCH", "/members/bob", { body: { fields: { role: "Engineer" } } });
    expect((await allMemberIds(ws, audience)).sort()).toEqual(["ada", "bob"]);
    await ws.call("POST", "/members", { body: { members: [{ id: "ada", fields: { role: "Manager" } }] } });
    expect(await allMemberIds(ws, audience)).toEqual(["bob"]);
    const other = await createAudience(ws);
    await addMembers(ws, other, { members: [{ id: "dee", email: "dee@example.org", fields: { role: "ENGINEER" } }] });
    expect((await allMemberIds(ws, audience)).sort()).toEqual(["bob", "dee"]);
    expect((await ws.call("GET", `/audiences/${audience}/members`)).body.totalCount).toBe(2);
    await ws.call("PATCH", "/members/bob", { body: { fields: { role: null } } });
    expect(await allMemberIds(ws, audience)).toEqual(["dee"]);
  });

  it("keep manual decisions: a removed member stays out, an added one stays in", async () => {
    const audience = await createAudience(ws);
    await addMembers(ws, audience, { memberIds: ["cy"] });
    await setFilter(audience, { field: "anyEmail", op: "contains", value: "acme" });
    await ws.call("DELETE", `/audiences/${audience}/members`, { body: { memberIds: ["bob"] } });
    expect((await allMemberIds(ws, audience)).sort()).toEqual(["ada", "cy"]);
    const set = await setFilter(audience, { field: "id", op: "in", value: ["ADA", "BOB"] });
    expect(set.body.memberCount).toBe(2);
    expect((await allMemberIds(ws, audience)).sort()).toEqual(["ada", "cy"]);
    expect((await setFilter(audience, null)).body).toEqual({ filter: null, memberCount: 1 });
    expect(await allMemberIds(ws, audience)).toEqual(["cy"]);
  });

  it("merge into an audience that is the union now and follows both rules afterwards", async () => {
    const a = await createAudience(ws);
    const b = await createAudience(ws);
    await setFilter(a, { field: "fields.company", op: "eq", value: "acme" });
    await setFilter(b, { field: "fields.company", op: "eq", value: "initech" });
    await ws.call("DELETE", `/audiences/${b}/members`, { body: { memberIds: ["bob"] } });
    const merged = (await ws.call("POST", "/audiences/merge", { body: { name: "Both", audienceIds: [a, b] } })).body.id;
    expect(await allMemberIds(ws, merged)).toEqual(["ada"]);
    const filter = (await ws.call("GET", `/audiences/${merged}/filter`)).body.filter;
    expect(filter).toEqual({
      any: [
        { field: "fields.company", op: "eq", value: "acme" },
        { field: "fields.company", op: "eq", value: "initech" },
      ],
    });
    await ws.call("POST", "/members", { body: { members: [{ id: "eve", fields: { company: "Initech" } }] } });
    expect((await allMemberIds(ws, merged)).sort()).toEqual(["ada", "eve"]);
  });

  it("preview a filter without saving anything", async () => {
    const response = await ws.call("POST", "/audiences/preview", {
      body: { filter: { field: "anyEmail", op: "contains", value: "ACME" }, limit: 1 },
    });
    expect(response.status).toBe(200);
    expect(response.body.totalCount).toBe(2);
    expect(response.body.results).toHaveLength(1);
  });

  it.each([
    ["an unknown field", { field: "phone", op: "eq", value: "1" }, "/body/filter/field"],
    ["an operator the field has not", { field: "createdAt", op: "contains", value: "2026" }, "/body/filter/op"],
    ["a missing value", { field: "email", op: "eq" }, "/body/filter/value"],
    ["a value for exists", { field: "email", op: "exists", value: "x" }, "/body/filter/value"],
    ["a list for eq", { field: "email", op: "eq", value: ["a"] }, "/body/filter/value"],
    ["a bad timestamp", { field: "createdAt", op: "before", value: "yesterday" }, "/body/filter/value"],
    ["an empty all", { all: [] }, "/body/filter/all"],
    [
      "a bad node deep inside",
      { all: [{ any: [{ not: { field: "id", op: "nope", value: "x" } }] }] },
      "/body/filter/all/0/any/0/not/op",
    ],
    ["two combinators", { all: [{ field: "id", op: "exists" }], any: [] }, "/body/filter"],
  ])("answers 400 invalid_filter for %s, pointing at the node", async (_case, filter, pointer) => {
    const audience = await createAudience(ws);
    const response = await setFilter(audience, filter);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe("invalid_filter");
    expect(response.body.errors[0].pointer).toBe(pointer);
    expect((await ws.call("GET", `/audiences/${audience}/filter`)).body.filter).toBeNull();
  });

  it("refuses more than 10 levels or 100 conditions", async () => {
    const audience = await createAudience(ws);
    let deep: unknown = { field: "id", op: "exists" };
    for (let i = 0; i < 10; i++) deep = { not: deep };
    expect((await setFilter(audience, deep)).body.code).toBe("invalid_filter");
    const wide = {
      any: Array.from({ length: 60 }, () => ({
        all: [
          { field: "id", op: "exists" },
          { field: "email", op: "exists" },
        ],
      })),
    };
    const response = await setFilter(audience, wide);
    expect(response.body.code).toBe("invalid_filter");
    expect(response.body.detail).toContain("100 conditions");
  });

  it("answers 409 for an archived audience and 404 for an unknown one", async () => {
    const audience = await createAudience(ws);
    await ws.call("DELETE", `/audiences/${audience}`);
    expect((await setFilter(audience, null)).body.code).toBe("audience_archived");
    expect((await ws.call("GET", "/audiences/aud_none/filter")).status).toBe(404);
  });
});

describe("updateAudience", () => {
  it("renames with the name rules", async () => {
    const audience = await createAudience(ws, "Before");
    await createAudience(ws, "Taken");
    const renamed = await ws.call("PATCH", `/audiences/${audience}`, { body: { name: "  After " } });
    expect(renamed.body).toEqual({ id: audience, name: "After" });
    expect((await ws.call("PATCH", `/audiences/${audience}`, { body: { name: "TAKEN" } })).body.code).toBe(
      "audience_name_taken",
    );
    expect((await ws.call("PATCH", `/audiences/${audience}`, { body: { name: "after" } })).status).toBe(200);
  });
});

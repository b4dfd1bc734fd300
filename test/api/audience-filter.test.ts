import type { components } from "@audience-service/client";
import { describe, expect } from "vitest";
import { rejectionOf } from "../support/checked-client.ts";
import { addMembers, allMemberIds, createAudience, type TestWorkspace, upsertMembers } from "../support/factories.ts";
import { test } from "../support/fixture.ts";
import { call, urlOf } from "../support/live-server.ts";

type Filter = components["schemas"]["Filter"];
const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";
const FILTER = `${AUDIENCE}/filter` as const;

// Every test starts with these three members in its workspace.
const it = test.extend("people", { auto: true }, ({ ws }) =>
  upsertMembers(ws, [
    { id: "ada", email: "ada@acme.com", fields: { company: "Acme", role: "Engineer" } },
    { id: "bob", email: "bob@initech.com", alternativeEmails: ["bob@ACME.com"], fields: { company: "Initech" } },
    { id: "cy", email: "cy@example.org", fields: { company: "ÄRGER GmbH" } },
  ]),
);

const getFilter = (ws: TestWorkspace, audienceId: string) =>
  ws.api.GET(FILTER, { params: { path: { workspaceId: ws.id, audienceId } } });
const setFilter = (ws: TestWorkspace, audienceId: string, filter: Filter | null) =>
  ws.api.PUT(FILTER, { params: { path: { workspaceId: ws.id, audienceId } }, body: { filter } });
const updateMember = (ws: TestWorkspace, memberId: string, role: string | null) =>
  ws.api.PATCH("/v0/workspaces/{workspaceId}/members/{memberId}", {
    params: { path: { workspaceId: ws.id, memberId } },
    body: { fields: { role } },
  });

describe("audience filters", () => {
  it("start null, match nobody, and take effect in the response that sets them", async ({ ws }) => {
    const audience = await createAudience(ws);
    expect(await getFilter(ws, audience)).toEqual({ filter: null, memberCount: 0 });
    const filter = { field: "fields.company", op: "eq", value: "ACME" } as const;
    expect(await setFilter(ws, audience, filter)).toEqual({ filter, memberCount: 1 });
    expect(await allMemberIds(ws, audience)).toEqual(["ada"]);
    expect(await getFilter(ws, audience)).toEqual({ filter, memberCount: 1 });
  });

  it("compare case-insensitively, beyond ASCII too, and match any e-mail with anyEmail", async ({ ws }) => {
    const audience = await createAudience(ws);
    await setFilter(ws, audience, {
      any: [
        { field: "anyEmail", op: "endsWith", value: "@acme.com" },
        { field: "fields.company", op: "startsWith", value: "ärger" },
      ],
    });
    expect((await allMemberIds(ws, audience)).sort()).toEqual(["ada", "bob", "cy"]);
    await setFilter(ws, audience, { field: "email", op: "endsWith", value: "@ACME.COM" });
    expect(await allMemberIds(ws, audience)).toEqual(["ada"]);
  });

  it("follow member changes in the request that makes them, through either API", async ({ ws, api, workspaceId }) => {
    const audience = await createAudience(ws);
    await setFilter(ws, audience, { field: "fields.role", op: "eq", value: "engineer" });
    expect(await allMemberIds(ws, audience)).toEqual(["ada"]);
    await updateMember(ws, "bob", "Engineer");
    expect((await allMemberIds(ws, audience)).sort()).toEqual(["ada", "bob"]);
    await upsertMembers(ws, [{ id: "ada", fields: { role: "Manager" } }]);
    expect(await allMemberIds(ws, audience)).toEqual(["bob"]);
    const other = await createAudience(ws);
    await addMembers(ws, other, { members: [{ id: "dee", email: "dee@example.org", fields: { role: "ENGINEER" } }] });
    expect((await allMemberIds(ws, audience)).sort()).toEqual(["bob", "dee"]);
    const page = await api.GET(`${AUDIENCE}/members`, { params: { path: { workspaceId, audienceId: audience } } });
    expect(page.totalCount).toBe(2);
    await updateMember(ws, "bob", null);
    expect(await allMemberIds(ws, audience)).toEqual(["dee"]);
  });

  it("keep manual decisions: a removed member stays out, an added one stays in", async ({ ws, api, workspaceId }) => {
    const audience = await createAudience(ws);
    await addMembers(ws, audience, { memberIds: ["cy"] });
    await setFilter(ws, audience, { field: "anyEmail", op: "contains", value: "acme" });
    const path = { workspaceId, audienceId: audience };
    await api.DELETE(`${AUDIENCE}/members`, { params: { path }, body: { memberIds: ["bob"] } });
    expect((await allMemberIds(ws, audience)).sort()).toEqual(["ada", "cy"]);
    const set = await setFilter(ws, audience, { field: "id", op: "in", value: ["ADA", "BOB"] });
    expect(set.memberCount).toBe(2);
    expect((await allMemberIds(ws, audience)).sort()).toEqual(["ada", "cy"]);
    expect(await setFilter(ws, audience, null)).toEqual({ filter: null, memberCount: 1 });
    expect(await allMemberIds(ws, audience)).toEqual(["cy"]);
  });

  it("merge into an audience that is the union now and follows both rules afterwards", async ({
    ws,
    api,
    workspaceId,
  }) => {
    const a = await createAudience(ws);
    const b = await createAudience(ws);
    await setFilter(ws, a, { field: "fields.company", op: "eq", value: "acme" });
    await setFilter(ws, b, { field: "fields.company", op: "eq", value: "initech" });
    await api.DELETE(`${AUDIENCE}/members`, {
      params: { path: { workspaceId, audienceId: b } },
      body: { memberIds: ["bob"] },
    });
    const { id: merged } = await api.POST("/v0/workspaces/{workspaceId}/audiences/merge", {
      params: { path: { workspaceId } },
      body: { name: "Both", audienceIds: [a, b] },
    });
    expect(await allMemberIds(ws, merged)).toEqual(["ada"]);
    expect((await getFilter(ws, merged)).filter).toEqual({
      any: [
        { field: "fields.company", op: "eq", value: "acme" },
        { field: "fields.company", op: "eq", value: "initech" },
      ],
    });
    await upsertMembers(ws, [{ id: "eve", fields: { company: "Initech" } }]);
    expect((await allMemberIds(ws, merged)).sort()).toEqual(["ada", "eve"]);
  });

  it("preview a filter without saving anything", async ({ api, workspaceId }) => {
    const preview = await api.POST("/v0/workspaces/{workspaceId}/audiences/preview", {
      params: { path: { workspaceId } },
      body: { filter: { field: "anyEmail", op: "contains", value: "ACME" }, limit: 1 },
    });
    expect(preview.totalCount).toBe(2);
    expect(preview.results).toHaveLength(1);
  });

  // Filters the contract refuses, some of them beyond what its types can express.
  it.for([
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
  ] as const)(
    "answers 400 invalid_filter for %s, pointing at the node",
    async ([_case, filter, pointer], { ws, server }) => {
      const audienceId = await createAudience(ws);
      const response = await call(server, "PUT", urlOf(FILTER, { workspaceId: ws.id, audienceId }), {
        token: ws.key,
        body: { filter },
      });
      expect(response.status).toBe(400);
      expect(response.problem?.code).toBe("invalid_filter");
      expect(response.problem?.errors?.[0]?.pointer).toBe(pointer);
      expect((await getFilter(ws, audienceId)).filter).toBeNull();
    },
  );

  it("refuses more than 10 levels or 100 conditions", async ({ ws }) => {
    const audience = await createAudience(ws);
    let deep: Filter = { field: "id", op: "exists" };
    for (let i = 0; i < 10; i++) deep = { not: deep };
    expect((await rejectionOf(setFilter(ws, audience, deep))).code).toBe("invalid_filter");
    const wide = {
      any: Array.from({ length: 60 }, () => ({
        all: [
          { field: "id", op: "exists" as const },
          { field: "email", op: "exists" as const },
        ],
      })),
    };
    const error = await rejectionOf(setFilter(ws, audience, wide));
    expect(error.code).toBe("invalid_filter");
    expect(error.problem?.detail).toContain("100 conditions");
  });

  it("answers 409 for an archived audience and 404 for an unknown one", async ({ ws, api, workspaceId }) => {
    const audience = await createAudience(ws);
    await api.DELETE(AUDIENCE, { params: { path: { workspaceId, audienceId: audience } } });
    expect((await rejectionOf(setFilter(ws, audience, null))).code).toBe("audience_archived");
    expect((await rejectionOf(getFilter(ws, "aud_none"))).status).toBe(404);
    expect((await rejectionOf(setFilter(ws, "aud_none", null))).code).toBe("audience_not_found");
  });

  it("checks the filter, with the declared types, before the audience: a bad one is a 400 whatever the audience", async ({
    ws,
    api,
    workspaceId,
  }) => {
    await api.PUT("/v0/workspaces/{workspaceId}/fields/{fieldKey}", {
      params: { path: { workspaceId, fieldKey: "score" } },
      body: { type: "number" },
    });
    const archived = await createAudience(ws);
    await api.DELETE(AUDIENCE, { params: { path: { workspaceId, audienceId: archived } } });
    const bad: Filter = { field: "fields.score", op: "gt", value: "many" };
    const refusals = [];
    for (const id of [archived, "aud_none"]) {
      const { code, problem } = await rejectionOf(setFilter(ws, id, bad));
      refusals.push([code, problem?.errors?.[0]?.pointer]);
    }
    expect(refusals).toEqual([
      ["invalid_filter", "/body/filter/value"],
      ["invalid_filter", "/body/filter/value"],
    ]);
    // Valid for the declared type: the audience's errors, as before.
    const good: Filter = { field: "fields.score", op: "gt", value: "3" };
    expect((await rejectionOf(setFilter(ws, archived, good))).code).toBe("audience_archived");
    expect((await rejectionOf(setFilter(ws, "aud_none", good))).code).toBe("audience_not_found");
  });
});

describe("updateAudience", () => {
  it("renames with the name rules", async ({ ws, api, workspaceId }) => {
    const audience = await createAudience(ws, "Before");
    await createAudience(ws, "Taken");
    const rename = (name: string) =>
      api.PATCH(AUDIENCE, { params: { path: { workspaceId, audienceId: audience } }, body: { name } });
    expect(await rename("  After ")).toEqual({ id: audience, name: "After" });
    expect((await rejectionOf(rename("TAKEN"))).code).toBe("audience_name_taken");
    expect(await rename("after")).toEqual({ id: audience, name: "after" });
  });
});

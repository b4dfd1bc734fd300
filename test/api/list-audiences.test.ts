import type { operations } from "@audience-service/client";
import { describe, expect } from "vitest";
import { rejectionOf } from "../support/checked-client.ts";
import { createAudience, createWorkspace, type TestWorkspace } from "../support/factories.ts";
import { test } from "../support/fixture.ts";
import { call, urlOf } from "../support/live-server.ts";

const AUDIENCES = "/v0/workspaces/{workspaceId}/audiences";
type Query = NonNullable<operations["listAudiences"]["parameters"]["query"]>;

// Every test starts with these four audiences, created in this order; the last one is archived.
const it = test.extend("ids", { auto: true }, async ({ ws }) => {
  const ids: string[] = [];
  for (const name of ["Alpha readers", "Beta testers", "Gamma 100% fans", "Delta readers"]) {
    ids.push(await createAudience(ws, name));
  }
  await ws.api.DELETE(`${AUDIENCES}/{audienceId}`, {
    params: { path: { workspaceId: ws.id, audienceId: ids[3] ?? "" } },
  });
  return ids;
});

const list = (ws: TestWorkspace, query: Query = {}) =>
  ws.api.GET(AUDIENCES, { params: { path: { workspaceId: ws.id }, query } });
const names = async (ws: TestWorkspace, query: Query = {}) => (await list(ws, query)).results.map((a) => a.name);

describe("listAudiences", () => {
  it("answers unarchived audiences, most recent first, with exactly id, createdAt, name and isArchived", async ({
    ws,
    ids,
  }) => {
    const { results } = await list(ws);
    expect(results.map((a) => a.name)).toEqual(["Gamma 100% fans", "Beta testers", "Alpha readers"]);
    const first = results[0];
    expect(Object.keys(first ?? {}).sort()).toEqual(["createdAt", "id", "isArchived", "name"]);
    expect(first).toMatchObject({ id: ids[2], isArchived: false });
    expect(new Date(first?.createdAt ?? "").toISOString()).toBe(first?.createdAt);
  });

  it("orders oldest first with sortDirection=ASC", async ({ ws }) => {
    expect(await names(ws, { sortDirection: "ASC" })).toEqual(["Alpha readers", "Beta testers", "Gamma 100% fans"]);
  });

  it("includes archived audiences with includeArchived=true", async ({ ws }) => {
    const { results } = await list(ws, { includeArchived: true });
    expect(results.map((a) => a.name)).toEqual(["Delta readers", "Gamma 100% fans", "Beta testers", "Alpha readers"]);
    expect(results[0]?.isArchived).toBe(true);
  });

  it("filters by a case-insensitive search term, wildcards included literally", async ({ ws }) => {
    expect(await names(ws, { search: "READERS" })).toEqual(["Alpha readers"]);
    expect(await names(ws, { search: "100%" })).toEqual(["Gamma 100% fans"]);
    expect(await names(ws, { search: "_" })).toEqual([]);
  });

  it("answers only the workspace's own audiences", async ({ ws, server }) => {
    await createAudience(await createWorkspace(server), "Elsewhere");
    expect(await names(ws, { includeArchived: true })).not.toContain("Elsewhere");
  });

  it("pages with limit and after in either direction; without limit there is no pageInfo", async ({ ws }) => {
    expect(await list(ws)).not.toHaveProperty("pageInfo");
    for (const [sortDirection, expected] of [
      ["DESC", ["Delta readers", "Gamma 100% fans", "Beta testers", "Alpha readers"]],
      ["ASC", ["Alpha readers", "Beta testers", "Gamma 100% fans", "Delta readers"]],
    ] as const) {
      const seen: string[] = [];
      const pages: boolean[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await list(ws, { includeArchived: true, sortDirection, limit: 3, ...(after ? { after } : {}) });
        seen.push(...page.results.map((a) => a.name));
        pages.push(page.pageInfo?.hasNextPage ?? false);
        if (!page.pageInfo?.hasNextPage) break;
        after = page.pageInfo.endCursor;
      }
      expect(seen).toEqual(expected);
      expect(pages).toEqual([true, false]);
    }
    const exact = await list(ws, { limit: 3 });
    expect(exact.pageInfo?.hasNextPage).toBe(false);
    const empty = await list(ws, { limit: 1, search: "nobody" });
    expect(empty).toEqual({ results: [], pageInfo: { hasNextPage: false, endCursor: "" } });
  });

  it("refuses after without limit, a forged cursor and a cursor of the other direction", async ({ ws }) => {
    const { pageInfo } = await list(ws, { limit: 1 });
    const cases: [Query, string][] = [
      [{ after: pageInfo?.endCursor ?? "" }, "invalid_request"],
      [{ limit: 1, after: "bm90LWEtY3Vyc29y" }, "invalid_cursor"],
      [{ limit: 1, after: pageInfo?.endCursor ?? "", sortDirection: "ASC" }, "invalid_cursor"],
    ];
    for (const [query, code] of cases) {
      const error = await rejectionOf(list(ws, query));
      expect(error).toMatchObject({ status: 400, problem: { code } });
    }
  });

  // Query values the contract refuses, so the typed SDK cannot send them.
  it.for([
    ["sortDirection=UP", "/query/sortDirection"],
    ["includeArchived=maybe", "/query/includeArchived"],
    [`search=${"s".repeat(201)}`, "/query/search"],
    ["limit=0", "/query/limit"],
    ["limit=501", "/query/limit"],
  ] as const)("answers 400 for %s", async ([query, pointer], { ws, server }) => {
    const response = await call(server, "GET", urlOf(AUDIENCES, { workspaceId: ws.id }, query), { token: ws.key });
    expect(response.status).toBe(400);
    expect(response.problem?.errors?.[0]?.pointer).toBe(pointer);
  });
});

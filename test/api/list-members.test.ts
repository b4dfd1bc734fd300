import type { operations } from "@audience-service/client";
import { describe, expect } from "vitest";
import { rejectionOf } from "../support/checked-client.ts";
import { addMembers, createAudience, type TestWorkspace } from "../support/factories.ts";
import { test } from "../support/fixture.ts";
import { call, urlOf } from "../support/live-server.ts";

const MEMBERS = "/v0/workspaces/{workspaceId}/audiences/{audienceId}/members";
type Query = NonNullable<operations["listAudienceMembers"]["parameters"]["query"]>;

/**
 * Every test starts with an audience of 25 members, added in three batches and then one update.
 * Members of one batch share createdAt, and a later request's members get a later one (the
 * contract's Member.createdAt), so ids break the ties only within a batch (byte order: "B" < "a").
 */
const it = test.extend("seeded", async ({ ws }) => {
  const audience = await createAudience(ws);
  const batches = [
    ["a", "B", "c", "D", "e", "F", "g"],
    ["h", "I", "j", "K", "l", "M", "n", "O"],
    ["p", "Q", "r", "S", "t", "U", "v", "W", "x", "Y"],
  ];
  for (const batch of batches) await addMembers(ws, audience, { memberIds: batch });
  await addMembers(ws, audience, {
    members: [{ id: "S", email: "searchable@example.com", fields: { firstName: "Zora", company: "Acme 50%" } }],
  });
  const sortBatch = (batch: string[]) => [...batch].sort((x, y) => Buffer.compare(Buffer.from(y), Buffer.from(x)));
  /** Every member of `audience` in the default order (createdAt DESC, then id DESC in byte order). */
  const expectedDesc = [...batches].reverse().flatMap(sortBatch);
  return { audience, expectedDesc };
});

const page = (ws: TestWorkspace, audienceId: string, query: Query = {}) =>
  ws.api.GET(MEMBERS, { params: { path: { workspaceId: ws.id, audienceId }, query } });

describe("listAudienceMembers", () => {
  it("answers the most recent members first, 30 by default, with the total", async ({ ws, seeded }) => {
    const first = await page(ws, seeded.audience);
    expect(first.totalCount).toBe(25);
    expect(first.results.map((m) => m.id)).toEqual(seeded.expectedDesc);
    expect(first.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
    const times = first.results.map((m) => m.createdAt);
    expect([...times].sort().reverse()).toEqual(times);
  });

  it("walks every member forward with after, with exact pageInfo on every page", async ({ ws, seeded }) => {
    const seen: string[] = [];
    let after: string | undefined;
    for (let n = 0; ; n++) {
      const current = await page(ws, seeded.audience, { limit: 7, after });
      expect(current.totalCount).toBe(25);
      seen.push(...current.results.map((m) => m.id));
      expect(current.pageInfo.hasPreviousPage).toBe(n > 0);
      expect(current.pageInfo.hasNextPage).toBe(seen.length < 25);
      if (!current.pageInfo.hasNextPage) break;
      after = current.pageInfo.endCursor;
    }
    expect(seen).toEqual(seeded.expectedDesc);
  });

  it("walks back with before from the last page", async ({ ws, seeded: { audience, expectedDesc } }) => {
    const last = await page(ws, audience, {
      limit: 7,
      after: (await page(ws, audience, { limit: 21 })).pageInfo.endCursor,
    });
    expect(last.results.map((m) => m.id)).toEqual(expectedDesc.slice(21));
    expect(last.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const seen = [...last.results.map((m) => m.id)];
    let before = last.pageInfo.startCursor;
    for (;;) {
      const current = await page(ws, audience, { limit: 7, before });
      seen.unshift(...current.results.map((m) => m.id));
      expect(current.pageInfo.hasNextPage).toBe(true);
      expect(current.pageInfo.hasPreviousPage).toBe(seen.length < 25);
      if (!current.pageInfo.hasPreviousPage) break;
      before = current.pageInfo.startCursor;
    }
    expect(seen).toEqual(expectedDesc);
  });

  it("orders oldest first with sortDirection=ASC", async ({ ws, seeded }) => {
    const ascending = await page(ws, seeded.audience, { limit: 500, sortDirection: "ASC" });
    expect(ascending.results.map((m) => m.id)).toEqual([...seeded.expectedDesc].reverse());
  });

  it("answers an empty page with empty cursors past the end, and knows what lies before it", async ({ ws, seeded }) => {
    const everything = await page(ws, seeded.audience, { limit: 25 });
    const beyond = await page(ws, seeded.audience, { after: everything.pageInfo.endCursor });
    expect(beyond.results).toEqual([]);
    expect(beyond.pageInfo).toEqual({ hasNextPage: false, hasPreviousPage: true, startCursor: "", endCursor: "" });
    const empty = await page(ws, await createAudience(ws));
    expect(empty).toEqual({
      totalCount: 0,
      pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: "", endCursor: "" },
      results: [],
    });
  });

  it("keeps its place when the member at the cursor leaves the audience", async ({ ws }) => {
    const other = await createAudience(ws);
    await addMembers(ws, other, { memberIds: ["p1", "p2", "p3", "p4"] });
    const first = await page(ws, other, { limit: 2, sortDirection: "ASC" });
    await ws.api.DELETE(MEMBERS, {
      params: { path: { workspaceId: ws.id, audienceId: other } },
      body: { memberIds: [first.results[1]?.id ?? ""] },
    });
    const next = await page(ws, other, { limit: 2, sortDirection: "ASC", after: first.pageInfo.endCursor });
    expect(next.results.map((m) => m.id)).toEqual(["p3", "p4"]);
    expect(next.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
  });

  it("filters by a case-insensitive search over e-mail and named fields, counting matches", async ({ ws, seeded }) => {
    for (const search of ["SEARCHABLE@", "zora", "acme 50%"]) {
      const found = await page(ws, seeded.audience, { search });
      expect(found.totalCount).toBe(1);
      expect(found.results.map((m) => m.id)).toEqual(["S"]);
    }
    const none = await page(ws, seeded.audience, { search: "nobody" });
    expect(none.totalCount).toBe(0);
    expect(none.results).toEqual([]);
  });

  it("search follows a member's data as it changes and as members are deleted, in both listings", async ({
    ws,
    seeded,
  }) => {
    const workspaceMembers = (search: string) =>
      ws.api.GET("/v0/workspaces/{workspaceId}/members", {
        params: { path: { workspaceId: ws.id }, query: { search } },
      });
    const found = async (search: string) => {
      const [inAudience, inWorkspace] = await Promise.all([
        page(ws, seeded.audience, { search }),
        workspaceMembers(search),
      ]);
      return [inAudience, inWorkspace].map((p) => [p.totalCount, p.results.map((m) => m.id)]);
    };
    // An outsider matches in the workspace's listing only.
    await addMembers(ws, await createAudience(ws), { members: [{ id: "out", fields: { company: "Zorabank" } }] });
    expect(await found("zora")).toEqual([
      [1, ["S"]],
      [2, ["out", "S"]],
    ]);
    await ws.api.PATCH("/v0/workspaces/{workspaceId}/members/{memberId}", {
      params: { path: { workspaceId: ws.id, memberId: "S" } },
      body: { fields: { firstName: "Ingrid" } },
    });
    expect(await found("zora")).toEqual([
      [0, []],
      [1, ["out"]],
    ]);
    expect(await found("ingrid")).toEqual([
      [1, ["S"]],
      [1, ["S"]],
    ]);
    await ws.api.DELETE("/v0/workspaces/{workspaceId}/members", {
      params: { path: { workspaceId: ws.id } },
      body: { memberIds: ["S", "out"] },
    });
    expect(await found("ingrid")).toEqual([
      [0, []],
      [0, []],
    ]);
    expect(await found("zorabank")).toEqual([
      [0, []],
      [0, []],
    ]);
  });

  it("searches literally: wildcards and backslashes are characters, short terms work, no term spans two fields", async ({
    ws,
    seeded,
  }) => {
    await addMembers(ws, seeded.audience, {
      members: [
        {
          id: "lit1",
          email: "under_score@example.com",
          fields: { role: "C:\\Temp 100%", lastName: "Zoë Ångström", company: "Line\nBreak" },
        },
        { id: "lit2", email: "underXscore@example.com", fields: { firstName: "qz", lastName: "cd" } },
      ],
    });
    const ids = async (search: string) => (await page(ws, seeded.audience, { search })).results.map((m) => m.id);
    expect(await ids("under_sc")).toEqual(["lit1"]);
    expect(await ids("c:\\temp 100%")).toEqual(["lit1"]);
    expect(await ids("ZOË ÅNG")).toEqual(["lit1"]);
    expect(await ids("QZ")).toEqual(["lit2"]);
    expect(await ids("z\ncd")).toEqual([]);
    expect(await ids("e\nbr")).toEqual(["lit1"]);
    expect(await ids("under%")).toEqual([]);
  });

  it.for([
    ["limit=0", "/query/limit"],
    ["limit=501", "/query/limit"],
    ["limit=ten", "/query/limit"],
    ["sortDirection=desc", "/query/sortDirection"],
  ] as const)("answers 400 invalid_request for %s", async ([query, pointer], { ws, server, seeded }) => {
    // Query values the contract refuses, sent as is.
    const url = urlOf(MEMBERS, { workspaceId: ws.id, audienceId: seeded.audience }, query);
    const response = await call(server, "GET", url, { token: ws.key });
    expect(response.status).toBe(400);
    expect(response.problem?.code).toBe("invalid_request");
    expect(response.problem?.errors?.[0]?.pointer).toBe(pointer);
  });

  it("answers 400 invalid_cursor for a malformed cursor or another audience's cursor", async ({ ws, seeded }) => {
    const other = await createAudience(ws);
    await addMembers(ws, other, { memberIds: ["o1", "o2"] });
    const foreign = (await page(ws, other, { limit: 1 })).pageInfo.endCursor;
    const queries: Query[] = [{ after: "garbage!" }, { after: foreign }, { before: foreign }, { before: "eyJ4IjoxfQ" }];
    for (const query of queries) {
      const error = await rejectionOf(page(ws, seeded.audience, query));
      expect(error.status).toBe(400);
      expect(error.code).toBe("invalid_cursor");
    }
  });

  it("answers 400 when both after and before are sent", async ({ ws, seeded }) => {
    const cursor = (await page(ws, seeded.audience, { limit: 1 })).pageInfo.endCursor;
    const error = await rejectionOf(page(ws, seeded.audience, { after: cursor, before: cursor }));
    expect(error.status).toBe(400);
    expect(error.code).toBe("invalid_request");
  });

  it("answers 404 for an unknown audience", async ({ ws }) => {
    const error = await rejectionOf(page(ws, "aud_none"));
    expect(error.status).toBe(404);
    expect(error.code).toBe("audience_not_found");
  });
});

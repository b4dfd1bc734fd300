import type { operations } from "@audience-service/client";
import { describe, expect } from "vitest";
import { addMembers, createAudience, type TestWorkspace } from "../support/factories.ts";
import { test } from "../support/fixture.ts";

const MEMBERS = "/v0/workspaces/{workspaceId}/audiences/{audienceId}/members";
type Query = NonNullable<operations["listAudienceMembers"]["parameters"]["query"]>;

/**
 * Pages of audiences over 20,000 members, past the first bitset chunk (8,192 member numbers):
 * one that holds every member, and one that is dense, then empty for 6,000 numbers across a
 * chunk boundary, then sparse (pages that start in one chunk and end in the next). Ids
 * are numbered so that their order is creation order: the first 10,000 are created by one
 * request, the rest by a later one.
 */
const MEMBER_COUNT = 20_000;
const idOf = (n: number) => `m${String(n).padStart(5, "0")}`;
const inPatchy = (n: number) => (n < 6_000 ? n % 3 === 0 : n >= 12_000 && n % 11 === 0);

const it = test.extend("audiences", async ({ ws }) => {
  const everyone = await createAudience(ws, "Everyone");
  const patchy = await createAudience(ws, "Patchy");
  for (let from = 0; from < MEMBER_COUNT; from += 10_000) {
    const ids = Array.from({ length: 10_000 }, (_, i) => from + i);
    await addMembers(ws, everyone, { memberIds: ids.map(idOf) });
    await addMembers(ws, patchy, { memberIds: ids.filter(inPatchy).map(idOf) });
  }
  const all = Array.from({ length: MEMBER_COUNT }, (_, n) => n);
  return {
    everyone: { id: everyone, ids: all.map(idOf) },
    patchy: { id: patchy, ids: all.filter(inPatchy).map(idOf) },
  };
});

const page = (ws: TestWorkspace, audienceId: string, query: Query) =>
  ws.api.GET(MEMBERS, { params: { path: { workspaceId: ws.id, audienceId }, query } });

/** Every page from the start, following endCursor, with pageInfo checked on each. */
async function forward(ws: TestWorkspace, audienceId: string, query: Query) {
  const ids: string[] = [];
  let after: string | undefined;
  for (;;) {
    const next = await page(ws, audienceId, { ...query, ...(after ? { after } : {}) });
    expect(next.pageInfo.hasPreviousPage, `page after ${ids.length}: anything before it`).toBe(ids.length > 0);
    ids.push(...next.results.map((m) => m.id));
    if (!next.pageInfo.hasNextPage) return { ids, last: next.pageInfo.endCursor as string };
    after = next.pageInfo.endCursor as string;
  }
}

/** Every member before the cursor, page by page with before, with pageInfo checked on each. */
async function backward(ws: TestWorkspace, audienceId: string, query: Query, before: string) {
  const ids: string[] = [];
  for (;;) {
    const next = await page(ws, audienceId, { ...query, before });
    expect(next.pageInfo.hasNextPage, `page before ${ids.length} from the end: anything after it`).toBe(true);
    ids.unshift(...next.results.map((m) => m.id));
    if (!next.pageInfo.hasPreviousPage) return ids;
    before = next.pageInfo.startCursor as string;
  }
}

/** The audience walked forward, then back from its last member, in the query's order. */
async function bothWays(ws: TestWorkspace, audienceId: string, query: Query) {
  const { ids, last } = await forward(ws, audienceId, query);
  const back = await backward(ws, audienceId, query, last);
  return { forward: ids, backward: [...back, ids.at(-1)] };
}

describe("listAudienceMembers over many members", () => {
  it("walks an audience holding every member, both ways and in both orders", async ({ ws, audiences }) => {
    const { id, ids } = audiences.everyone;
    expect(await bothWays(ws, id, { limit: 500, sortDirection: "ASC" })).toEqual({ forward: ids, backward: ids });
    const newestFirst = [...ids].reverse();
    expect(await bothWays(ws, id, { limit: 500 })).toEqual({ forward: newestFirst, backward: newestFirst });
  });

  it("walks an audience dense, then empty across a chunk boundary, then sparse, both ways", async ({
    ws,
    audiences,
  }) => {
    const { id, ids } = audiences.patchy;
    expect(await bothWays(ws, id, { limit: 100, sortDirection: "ASC" })).toEqual({ forward: ids, backward: ids });
    const newestFirst = [...ids].reverse();
    expect(await bothWays(ws, id, { limit: 500 })).toEqual({ forward: newestFirst, backward: newestFirst });
    expect((await page(ws, id, { limit: 5 })).totalCount).toBe(ids.length);
  });
});

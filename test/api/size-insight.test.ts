// Overlap, size history and sizes in listings (issue 31): a workspace built so that every count
// is known, on the embedded store and on PostgreSQL.
import type { operations } from "@audience-service/client";
import { describe, expect } from "vitest";
import { rejectionOf } from "../support/checked-client.ts";
import {
  addMembers,
  createAudience,
  createWorkspace,
  type TestWorkspace,
  upsertMembers,
} from "../support/factories.ts";
import { it } from "../support/fixture.ts";

const AUDIENCES = "/v0/workspaces/{workspaceId}/audiences";
const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";

const overlap = (ws: TestWorkspace, audienceIds: string[]) =>
  ws.api.POST(`${AUDIENCES}/overlap`, { params: { path: { workspaceId: ws.id } }, body: { audienceIds } });

const remove = (ws: TestWorkspace, audienceId: string, memberIds: string[]) =>
  ws.api.DELETE(`${AUDIENCE}/members`, { params: { path: { workspaceId: ws.id, audienceId } }, body: { memberIds } });

type Rule = operations["setAudienceFilter"]["requestBody"]["content"]["application/json"]["filter"];

const setRule = (ws: TestWorkspace, audienceId: string, filter: Rule) =>
  ws.api.PUT(`${AUDIENCE}/filter`, {
    params: { path: { workspaceId: ws.id, audienceId } },
    body: { filter },
  });

const history = (
  ws: TestWorkspace,
  audienceId: string,
  query: { interval?: "hour" | "day"; from?: string; to?: string } = {},
) => ws.api.GET(`${AUDIENCE}/history`, { params: { path: { workspaceId: ws.id, audienceId }, query } });

/** A = m1..m6, B = m4..m9, C = m1 m5 m9 m10: A∩B = 3, A∩C = 2, B∩C = 2, all three = 1 (m5). */
async function threeAudiences(ws: TestWorkspace) {
  const [a, b, c] = [await createAudience(ws), await createAudience(ws), await createAudience(ws)];
  await addMembers(ws, a, { memberIds: ["m1", "m2", "m3", "m4", "m5", "m6"] });
  await addMembers(ws, b, { memberIds: ["m4", "m5", "m6", "m7", "m8", "m9"] });
  await addMembers(ws, c, { memberIds: ["m1", "m5", "m9", "m10"] });
  return { a, b, c };
}

describe("audienceOverlap", () => {
  it("counts every audience, every pair in the order given and all of them", async ({ ws }) => {
    const { a, b, c } = await threeAudiences(ws);
    expect(await overlap(ws, [a, b, c])).toEqual({
      audiences: [
        { id: a, memberCount: 6 },
        { id: b, memberCount: 6 },
        { id: c, memberCount: 4 },
      ],
      pairs: [
        { audienceIds: [a, b], count: 3 },
        { audienceIds: [a, c], count: 2 },
        { audienceIds: [b, c], count: 2 },
      ],
      all: 1,
    });
    expect(await overlap(ws, [c, a])).toEqual({
      audiences: [
        { id: c, memberCount: 4 },
        { id: a, memberCount: 6 },
      ],
      pairs: [{ audienceIds: [c, a], count: 2 }],
      all: 2,
    });
  });

  it("counts archived and empty audiences", async ({ ws, api, workspaceId }) => {
    const { a, b } = await threeAudiences(ws);
    const empty = await createAudience(ws);
    await api.DELETE(AUDIENCE, { params: { path: { workspaceId, audienceId: b } } });
    expect(await overlap(ws, [a, b, empty])).toEqual({
      audiences: [
        { id: a, memberCount: 6 },
        { id: b, memberCount: 6 },
        { id: empty, memberCount: 0 },
      ],
      pairs: [
        { audienceIds: [a, b], count: 3 },
        { audienceIds: [a, empty], count: 0 },
        { audienceIds: [b, empty], count: 0 },
      ],
      all: 0,
    });
  });

  it.for([
    ["one id", 1],
    ["21 ids", 21],
  ] as const)("answers 400 invalid_request for %s", async ([, count], { ws }) => {
    const ids = Array.from({ length: count }, (_, i) => `aud_missing${i}`);
    const error = await rejectionOf(overlap(ws, ids));
    expect(error.status).toBe(400);
    expect(error.code).toBe("invalid_request");
    expect(error.problem?.errors?.[0]?.pointer).toBe("/body/audienceIds");
  });

  it("answers 400 invalid_request for an audience given twice", async ({ ws }) => {
    const a = await createAudience(ws);
    const b = await createAudience(ws);
    const error = await rejectionOf(overlap(ws, [a, b, a]));
    expect(error.status).toBe(400);
    expect(error.code).toBe("invalid_request");
    expect(error.problem?.errors?.[0]?.pointer).toBe("/body/audienceIds");
  });

  it("answers 404 audience_not_found naming the first unknown or foreign id", async ({ ws, server }) => {
    const a = await createAudience(ws);
    const foreign = await createAudience(await createWorkspace(server));
    for (const ids of [
      [a, "aud_missing", foreign],
      [foreign, a, "aud_missing"],
    ]) {
      const error = await rejectionOf(overlap(ws, ids));
      expect(error.status).toBe(404);
      expect(error.code).toBe("audience_not_found");
      expect(error.problem?.detail).toContain(ids.find((id) => id !== a));
    }
  });
});

describe("include=stats", () => {
  it("adds size, rule, last change (and to getAudience whether it is archived) to listAudiences and getAudience", async ({
    ws,
    api,
    workspaceId,
  }) => {
    const manual = await createAudience(ws, "Manual");
    await addMembers(ws, manual, { memberIds: ["s1", "s2", "s3"] });
    const ruled = await createAudience(ws, "Ruled");
    await setRule(ws, ruled, { field: "id", op: "in", value: ["s1", "s4"] });
    const listed = await api.GET(AUDIENCES, { params: { path: { workspaceId }, query: { include: "stats" } } });
    expect(listed.results.map(({ updatedAt: _, ...rest }) => rest)).toEqual([
      { id: ruled, createdAt: expect.any(String), name: "Ruled", isArchived: false, memberCount: 1, hasRule: true },
      { id: manual, createdAt: expect.any(String), name: "Manual", isArchived: false, memberCount: 3, hasRule: false },
    ]);
    for (const item of listed.results) {
      expect(Date.parse(item.updatedAt ?? "")).toBeGreaterThanOrEqual(Date.parse(item.createdAt));
    }
    const one = await api.GET(AUDIENCE, {
      params: { path: { workspaceId, audienceId: manual }, query: { include: "stats" } },
    });
    expect(one).toEqual({
      id: manual,
      name: "Manual",
      memberCount: 3,
      hasRule: false,
      isArchived: false,
      updatedAt: listed.results[1]?.updatedAt,
    });
    // Read fresh, not from the cache of names that a plain read fills.
    await api.GET(AUDIENCE, { params: { path: { workspaceId, audienceId: manual } } });
    await remove(ws, manual, ["s2"]);
    const after = await api.GET(AUDIENCE, {
      params: { path: { workspaceId, audienceId: manual }, query: { include: "stats" } },
    });
    expect(after.memberCount).toBe(2);
    // Archived, it says so: a client need not list the audiences to know.
    await api.DELETE(AUDIENCE, { params: { path: { workspaceId, audienceId: manual } } });
    const archived = await api.GET(AUDIENCE, {
      params: { path: { workspaceId, audienceId: manual }, query: { include: "stats" } },
    });
    expect(archived.isArchived).toBe(true);
  });

  it("leaves the answers without it byte for byte as they were", async ({ ws, server, api, workspaceId }) => {
    const a = await createAudience(ws, "Plain");
    await addMembers(ws, a, { memberIds: ["p1"] });
    const [item] = (await api.GET(AUDIENCES, { params: { path: { workspaceId } } })).results;
    const raw = async (path: string) => {
      const response = await fetch(`${server.baseUrl}/v0/workspaces/${workspaceId}${path}`, {
        headers: { authorization: `Bearer ${ws.key}` },
      });
      return response.text();
    };
    const listItem = `{"id":"${a}","createdAt":"${item?.createdAt}","name":"Plain","isArchived":false}`;
    expect(await raw("/audiences")).toBe(`{"results":[${listItem}]}`);
    expect(await raw(`/audiences/${a}`)).toBe(`{"id":"${a}","name":"Plain"}`);
    expect(await raw("/audiences?limit=1")).toMatch(
      new RegExp(`^\\{"results":\\[${listItem.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\],"pageInfo":`),
    );
  });
});

describe("audienceHistory", () => {
  /** Sums over the rows, and the last row's size: what every series must reproduce. */
  const totals = (rows: { entered: number; left: number; memberCount: number }[]) => ({
    entered: rows.reduce((sum, row) => sum + row.entered, 0),
    left: rows.reduce((sum, row) => sum + row.left, 0),
    last: rows.at(-1)?.memberCount,
  });

  it("counts adds, removes and rule changes, and its sums give the size", async ({ ws, api, workspaceId }) => {
    await upsertMembers(ws, [{ id: "h4" }]);
    const h = await createAudience(ws);
    await addMembers(ws, h, { memberIds: ["h1", "h2", "h3"] }); // +3
    await remove(ws, h, ["h2"]); // −1 (and h2 is excluded by hand)
    await setRule(ws, h, { field: "id", op: "in", value: ["h2", "h4"] }); // +1: h4
    await setRule(ws, h, null); // −1: h4
    const size = (await api.GET(`${AUDIENCE}/members`, { params: { path: { workspaceId, audienceId: h } } }))
      .totalCount;
    expect(size).toBe(2);
    for (const interval of ["hour", "day"] as const) {
      const { results } = await history(ws, h, { interval });
      expect(totals(results)).toEqual({ entered: 4, left: 2, last: 2 });
      // Buckets start on the hour or at midnight, UTC; a run crossing one may see two.
      expect(results.length).toBeLessThanOrEqual(2);
      for (const row of results) {
        expect(row.at).toMatch(interval === "hour" ? /T\d\d:00:00\.000Z$/ : /T00:00:00\.000Z$/);
      }
    }
    expect(totals((await history(ws, h)).results)).toEqual({ entered: 4, left: 2, last: 2 });
  });

  it("gives merged and snapshot audiences their first row, and keeps archived ones'", async ({
    ws,
    api,
    workspaceId,
  }) => {
    const { a, b } = await threeAudiences(ws);
    const merged = await api.POST(`${AUDIENCES}/merge`, {
      params: { path: { workspaceId } },
      body: { name: "Union", audienceIds: [a, b] },
    });
    expect(totals((await history(ws, merged.id)).results)).toEqual({ entered: 9, left: 0, last: 9 });
    const snapshot = await api.POST(`${AUDIENCE}/snapshot`, {
      params: { path: { workspaceId, audienceId: a } },
      body: { name: "Copy" },
    });
    expect(totals((await history(ws, snapshot.id)).results)).toEqual({ entered: 6, left: 0, last: 6 });
    await api.DELETE(AUDIENCE, { params: { path: { workspaceId, audienceId: a } } });
    expect(totals((await history(ws, a)).results)).toEqual({ entered: 6, left: 0, last: 6 });
  });

  it("has no rows for an audience whose members never changed", async ({ ws }) => {
    expect(await history(ws, await createAudience(ws))).toEqual({ results: [] });
  });

  it("returns only the buckets whose start lies between from and to", async ({ ws }) => {
    const h = await createAudience(ws);
    await addMembers(ws, h, { memberIds: ["f1"] });
    const [row] = (await history(ws, h, { interval: "hour" })).results;
    const at = row?.at ?? "";
    const later = new Date(Date.parse(at) + 3_600_000).toISOString();
    const earlier = new Date(Date.parse(at) - 1).toISOString();
    expect((await history(ws, h, { interval: "hour", from: at, to: at })).results).toEqual([row]);
    expect((await history(ws, h, { interval: "hour", from: later, to: later })).results).toEqual([]);
    expect((await history(ws, h, { interval: "hour", to: earlier })).results).toEqual([]);
  });

  it("answers 400 invalid_request when from is later than to", async ({ ws }) => {
    const h = await createAudience(ws);
    const error = await rejectionOf(
      history(ws, h, { from: "2026-11-02T00:00:00.000Z", to: "2026-11-01T00:00:00.000Z" }),
    );
    expect(error.status).toBe(400);
    expect(error.code).toBe("invalid_request");
  });

  it("answers 404 audience_not_found for an unknown or foreign audience", async ({ ws, server }) => {
    const foreign = await createAudience(await createWorkspace(server));
    for (const id of ["aud_missing", foreign]) {
      const error = await rejectionOf(history(ws, id));
      expect(error.status).toBe(404);
      expect(error.code).toBe("audience_not_found");
    }
  });
});

// Who was in, and who came and went (issue 49): an audience's members at past instants, the
// members who entered and left between two, a member's audiences at an instant, on both stores.
import { describe, expect } from "vitest";
import { rejectionOf } from "../support/checked-client.ts";
import {
  addMembers,
  createAudience,
  instantBetweenWrites,
  type TestWorkspace,
  upsertMembers,
} from "../support/factories.ts";
import { it } from "../support/fixture.ts";

const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";
const DAY_MS = 86_400_000;

type PageQuery = { asOf: string; limit?: number; after?: string; before?: string; sortDirection?: "ASC" | "DESC" };

const membersAsOf = (ws: TestWorkspace, audienceId: string, query: PageQuery) =>
  ws.api.GET(`${AUDIENCE}/members`, { params: { path: { workspaceId: ws.id, audienceId }, query } });

const idsAsOf = async (ws: TestWorkspace, audienceId: string, asOf: string) =>
  (await membersAsOf(ws, audienceId, { asOf, sortDirection: "ASC" })).results.map((m) => m.id);

const changes = (
  ws: TestWorkspace,
  audienceId: string,
  query: { from?: string; to?: string; limit?: number; after?: string },
) => ws.api.GET(`${AUDIENCE}/changes`, { params: { path: { workspaceId: ws.id, audienceId }, query } });

const audiencesAsOf = (ws: TestWorkspace, memberId: string, asOf: string) =>
  ws.api.GET("/v0/workspaces/{workspaceId}/members/{memberId}/audiences", {
    params: { path: { workspaceId: ws.id, memberId }, query: { asOf } },
  });

const remove = (ws: TestWorkspace, audienceId: string, memberIds: string[]) =>
  ws.api.DELETE(`${AUDIENCE}/members`, { params: { path: { workspaceId: ws.id, audienceId } }, body: { memberIds } });

const deleteMembers = (ws: TestWorkspace, memberIds: string[]) =>
  ws.api.DELETE("/v0/workspaces/{workspaceId}/members", {
    params: { path: { workspaceId: ws.id } },
    body: { memberIds },
  });

/** m1 and m2 in, then m1 out and m3 in, then m2 deleted: the instants between. */
async function story(ws: TestWorkspace) {
  const audienceId = await createAudience(ws);
  const t0 = await instantBetweenWrites();
  await upsertMembers(ws, [{ id: "m1", email: "m1@example.com" }]);
  await addMembers(ws, audienceId, { memberIds: ["m1", "m2"] });
  const t1 = await instantBetweenWrites();
  await remove(ws, audienceId, ["m1"]);
  await addMembers(ws, audienceId, { memberIds: ["m3"] });
  const t2 = await instantBetweenWrites();
  await deleteMembers(ws, ["m2"]);
  const t3 = await instantBetweenWrites();
  return { audienceId, t0, t1, t2, t3 };
}

describe("listAudienceMembers asOf", () => {
  it("lists the members at each past instant, exactly", async ({ ws }) => {
    const { audienceId, t0, t1, t2, t3 } = await story(ws);
    expect(await idsAsOf(ws, audienceId, t0)).toEqual([]);
    expect(await idsAsOf(ws, audienceId, t1)).toEqual(["m1", "m2"]);
    expect(await idsAsOf(ws, audienceId, t2)).toEqual(["m2", "m3"]);
    expect(await idsAsOf(ws, audienceId, t3)).toEqual(["m3"]);
    const page = await membersAsOf(ws, audienceId, { asOf: t1 });
    expect(page.totalCount).toBe(2);
    // Members show their data as it is now.
    expect(page.results.map((m) => [m.id, m.email])).toEqual([
      ["m2", null],
      ["m1", "m1@example.com"],
    ]);
  });

  it("lists a member deleted since by its id, with deletedAt and no data", async ({ ws }) => {
    const { audienceId, t2 } = await story(ws);
    const page = await membersAsOf(ws, audienceId, { asOf: t2, sortDirection: "ASC" });
    const [deleted, kept] = page.results;
    expect(deleted).toMatchObject({ id: "m2", email: null, alternativeEmails: [] });
    expect(Date.parse(deleted?.deletedAt as string)).toBeGreaterThan(Date.parse(t2));
    expect(deleted?.fields).toEqual({ firstName: "", lastName: "", role: "", company: "" });
    expect(kept?.deletedAt).toBeUndefined();
  });

  it("pages forwards and backwards with cursors of the same instant", async ({ ws }) => {
    const audienceId = await createAudience(ws);
    await addMembers(ws, audienceId, { memberIds: ["a1", "a2", "a3", "a4", "a5"] });
    const t = await instantBetweenWrites();
    await remove(ws, audienceId, ["a2", "a3", "a4", "a5"]);
    const first = await membersAsOf(ws, audienceId, { asOf: t, limit: 2, sortDirection: "ASC" });
    expect(first.results.map((m) => m.id)).toEqual(["a1", "a2"]);
    expect(first.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    expect(first.totalCount).toBe(5);
    const second = await membersAsOf(ws, audienceId, {
      asOf: t,
      limit: 2,
      sortDirection: "ASC",
      after: first.pageInfo.endCursor,
    });
    expect(second.results.map((m) => m.id)).toEqual(["a3", "a4"]);
    expect(second.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
    const back = await membersAsOf(ws, audienceId, {
      asOf: t,
      limit: 2,
      sortDirection: "ASC",
      before: second.pageInfo.startCursor,
    });
    expect(back.results.map((m) => m.id)).toEqual(["a1", "a2"]);
    expect(back.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const other = await rejectionOf(
      membersAsOf(ws, audienceId, { asOf: new Date().toISOString(), after: first.pageInfo.endCursor }),
    );
    expect([other.status, other.code]).toEqual([400, "invalid_cursor"]);
  });

  it("reads archived audiences", async ({ ws }) => {
    const { audienceId, t1 } = await story(ws);
    await ws.api.DELETE(AUDIENCE, { params: { path: { workspaceId: ws.id, audienceId } } });
    expect(await idsAsOf(ws, audienceId, t1)).toEqual(["m1", "m2"]);
  });

  it("refuses instants before the record began or beyond the horizon, naming the oldest kept", async ({ ws }) => {
    const audienceId = await createAudience(ws);
    for (const asOf of [new Date(Date.now() - 401 * DAY_MS).toISOString(), "2020-01-01T00:00:00.000Z"]) {
      const refused = await rejectionOf(membersAsOf(ws, audienceId, { asOf }));
      expect([refused.status, refused.code]).toEqual([400, "history_unavailable"]);
      const oldest = Date.parse(refused.problem?.oldestAvailable as string);
      expect(oldest).toBeGreaterThan(Date.parse(asOf));
      expect(oldest).toBeLessThanOrEqual(Date.now());
    }
  });

  it("refuses search with asOf and an unknown audience", async ({ ws }) => {
    const audienceId = await createAudience(ws);
    const asOf = new Date().toISOString();
    const search = await rejectionOf(
      ws.api.GET(`${AUDIENCE}/members`, {
        params: { path: { workspaceId: ws.id, audienceId }, query: { asOf, search: "x" } },
      }),
    );
    expect([search.status, search.code]).toEqual([400, "invalid_request"]);
    const unknown = await rejectionOf(membersAsOf(ws, "aud_unknown", { asOf }));
    expect([unknown.status, unknown.code]).toEqual([404, "audience_not_found"]);
    // Files of an earlier instant: test/api/export-as-of.test.ts.
  });
});

describe("listAudienceChanges", () => {
  it("lists each member once with its net change, and counts the span exactly", async ({ ws }) => {
    const { audienceId, t0, t1, t3 } = await story(ws);
    const span = await changes(ws, audienceId, { from: t1, to: t3 });
    expect(span.results.map((c) => [c.memberId, c.change, c.reason])).toEqual([
      ["m1", "left", "manual"],
      ["m2", "left", "member_deleted"],
      ["m3", "entered", "manual"],
    ]);
    expect(span.counts).toEqual({ entered: 1, left: 2 });
    expect(span.moves).toEqual({ entered: 1, left: 2 });
    for (const change of span.results) {
      expect(Date.parse(change.at)).toBeGreaterThan(Date.parse(t1));
      expect(Date.parse(change.at)).toBeLessThanOrEqual(Date.parse(t3));
    }
    // m1 entered and left within the whole story: not listed, but moved twice.
    const whole = await changes(ws, audienceId, { from: t0, to: t3 });
    expect(whole.results.map((c) => [c.memberId, c.change])).toEqual([["m3", "entered"]]);
    expect(whole.counts).toEqual({ entered: 1, left: 0 });
    expect(whole.moves).toEqual({ entered: 3, left: 2 });
  });

  it("moves equal the size history's entered and left over the same span", async ({ ws }) => {
    const { audienceId, t0 } = await story(ws);
    const now = new Date().toISOString();
    const span = await changes(ws, audienceId, { from: t0, to: now });
    const hours = await ws.api.GET(`${AUDIENCE}/history`, {
      params: { path: { workspaceId: ws.id, audienceId }, query: { interval: "hour" } },
    });
    const sum = (key: "entered" | "left") => hours.results.reduce((total, row) => total + row[key], 0);
    expect(span.moves).toEqual({ entered: sum("entered"), left: sum("left") });
    const last = hours.results.at(-1)?.memberCount as number;
    expect(span.counts.entered - span.counts.left).toBe(last);
  });

  it("pages with cursors of the same span", async ({ ws }) => {
    const audienceId = await createAudience(ws);
    const from = await instantBetweenWrites();
    await addMembers(ws, audienceId, { memberIds: ["c1", "c2", "c3"] });
    const to = await instantBetweenWrites();
    const first = await changes(ws, audienceId, { from, to, limit: 2 });
    expect(first.results.map((c) => c.memberId)).toEqual(["c1", "c2"]);
    expect(first.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const next = await changes(ws, audienceId, { from, to, limit: 2, after: first.pageInfo.endCursor });
    expect(next.results.map((c) => c.memberId)).toEqual(["c3"]);
    expect(next.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    expect(next.counts).toEqual({ entered: 3, left: 0 });
    // Alone, a cursor continues its span, even one whose end defaulted to now.
    const fromNow = await changes(ws, audienceId, { limit: 2 });
    expect(fromNow.results.map((c) => c.memberId)).toEqual(["c1", "c2"]);
    await addMembers(ws, audienceId, { memberIds: ["c4"] });
    const rest = await changes(ws, audienceId, { limit: 2, after: fromNow.pageInfo.endCursor });
    expect(rest.results.map((c) => c.memberId)).toEqual(["c3"]);
    const other = await rejectionOf(changes(ws, audienceId, { from, after: first.pageInfo.endCursor }));
    expect(other.code).toBe("invalid_cursor");
  });

  it("refuses a span that starts before the record, or ends before it starts", async ({ ws }) => {
    const audienceId = await createAudience(ws);
    const early = await rejectionOf(changes(ws, audienceId, { from: "2020-01-01T00:00:00.000Z" }));
    expect([early.status, early.code]).toEqual([400, "history_unavailable"]);
    const now = new Date().toISOString();
    const reversed = await rejectionOf(changes(ws, audienceId, { from: now, to: "2026-01-01T00:00:00.000Z" }));
    expect([reversed.status, reversed.code]).toEqual([400, "invalid_request"]);
  });
});

describe("listMemberAudiences asOf", () => {
  it("lists the audiences a member was in, how it entered and when", async ({ ws }) => {
    const { audienceId, t1, t2 } = await story(ws);
    const ruled = await createAudience(ws);
    await ws.api.PUT(`${AUDIENCE}/filter`, {
      params: { path: { workspaceId: ws.id, audienceId: ruled } },
      body: { filter: { field: "email", op: "contains", value: "m1@" } },
    });
    const now = await instantBetweenWrites();
    expect((await audiencesAsOf(ws, "m1", t1)).results.map((a) => [a.id, a.reason])).toEqual([[audienceId, "manual"]]);
    expect((await audiencesAsOf(ws, "m1", t2)).results).toEqual([]);
    const later = await audiencesAsOf(ws, "m1", now);
    expect(later.results.map((a) => [a.id, a.reason])).toEqual([[ruled, "rule"]]);
    expect(Date.parse(later.results[0]?.enteredAt as string)).toBeLessThanOrEqual(Date.parse(now));
  });

  it("finds a member deleted since by its id; not one deleted before", async ({ ws }) => {
    const { audienceId, t1, t3 } = await story(ws);
    expect((await audiencesAsOf(ws, "m2", t1)).results.map((a) => a.id)).toEqual([audienceId]);
    const gone = await rejectionOf(audiencesAsOf(ws, "m2", t3));
    expect([gone.status, gone.code]).toEqual([404, "member_not_found"]);
  });
});

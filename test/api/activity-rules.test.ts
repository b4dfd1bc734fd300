// Rules over what members did: activity conditions are checked (a window past the retention, two
// windows, a bad count are refused with a pointer), evaluated exactly (counts, windows, `where`
// over properties, `not` for members who never did it), followed live as activities arrive
// (reason activity) and read by previews, node counts, dry runs and explanations.
import { describe, expect } from "vitest";
import { readFeed } from "../events/event-support.ts";
import { rejectionOf } from "../support/checked-client.ts";
import {
  allMemberIds,
  createAudience,
  ingestActivities as ingest,
  type TestWorkspace,
  upsertMembers,
} from "../support/factories.ts";
import { it } from "../support/fixture.ts";

const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";
const DAY = 86_400_000;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

const setFilter = (ws: TestWorkspace, audienceId: string, filter: unknown) =>
  ws.api.PUT(`${AUDIENCE}/filter`, {
    params: { path: { workspaceId: ws.id, audienceId } },
    body: { filter: filter as never },
  });
const preview = (ws: TestWorkspace, filter: unknown, nodeCounts = false) =>
  ws.api.POST("/v0/workspaces/{workspaceId}/audiences/preview", {
    params: { path: { workspaceId: ws.id } },
    body: { filter, nodeCounts } as never,
  });
const changes = async (ws: TestWorkspace, audienceId: string) =>
  (await readFeed(ws.api, ws.id)).flatMap((event) =>
    event.type === "audience.members_changed" && event.data.audienceId === audienceId
      ? [{ reason: event.data.reason, entered: event.data.entered, left: event.data.left }]
      : [],
  );

// "Attended at least twice in the last 90 days, and no order in the last 30 days."
const ENGAGED_NOT_BUYING = {
  all: [
    { activity: "session.attended", count: { op: "gte", value: 2 }, withinLast: "P90D" },
    { not: { activity: "order.placed", withinLast: "P30D" } },
  ],
};

describe("activity conditions", () => {
  it("refuse a window past the retention, two windows and a bad count, pointing at them", async ({ ws }) => {
    const audienceId = await createAudience(ws);
    const refused = async (filter: unknown) => {
      const error = await rejectionOf(setFilter(ws, audienceId, filter));
      return { status: error.status, code: error.code, pointer: error.problem?.errors?.[0]?.pointer };
    };
    expect(await refused({ activity: "order.placed", withinLast: "P401D" })).toEqual({
      status: 400,
      code: "invalid_filter",
      pointer: "/body/filter/withinLast",
    });
    expect(await refused({ all: [{ activity: "order.placed", withinLast: "P1D", notWithinLast: "P2D" }] })).toEqual({
      status: 400,
      code: "invalid_filter",
      pointer: "/body/filter/all/0/notWithinLast",
    });
    expect(await refused({ activity: "order.placed", count: { op: "gte", value: -1 } })).toEqual({
      status: 400,
      code: "invalid_filter",
      pointer: "/body/filter/count/value",
    });
    expect(
      await refused({ activity: "order.placed", where: { field: "properties.amount", op: "gt", value: "a lot" } }),
    ).toEqual({
      status: 400,
      code: "invalid_filter",
      pointer: "/body/filter/where/value",
    });
    expect(await refused({ activity: "order placed" })).toEqual({
      status: 400,
      code: "invalid_filter",
      pointer: "/body/filter/activity",
    });
  });

  it("follow each activity as it arrives: a member enters on its second session and leaves when it orders", async ({
    ws,
  }) => {
    await upsertMembers(ws, [{ id: "ada" }, { id: "bob" }]);
    const audienceId = await createAudience(ws, "Engaged, not buying");
    expect((await setFilter(ws, audienceId, ENGAGED_NOT_BUYING)).memberCount).toBe(0);

    await ingest(ws, [{ memberId: "ada", type: "session.attended", occurredAt: ago(10 * DAY) }]);
    expect(await allMemberIds(ws, audienceId)).toEqual([]);
    // A late arrival counts from when it occurred: 40 days ago is inside the 90-day window.
    await ingest(ws, [{ memberId: "ada", type: "session.attended", occurredAt: ago(40 * DAY) }]);
    expect(await allMemberIds(ws, audienceId)).toEqual(["ada"]);
    // bob's sessions are too old to count; an order from 60 days ago does not keep ada out.
    await ingest(ws, [
      { memberId: "bob", type: "session.attended", occurredAt: ago(100 * DAY) },
      { memberId: "bob", type: "session.attended", occurredAt: ago(95 * DAY) },
      { memberId: "ada", type: "order.placed", occurredAt: ago(60 * DAY) },
    ]);
    expect(await allMemberIds(ws, audienceId)).toEqual(["ada"]);
    await ingest(ws, [{ memberId: "ada", type: "order.placed" }]);
    expect(await allMemberIds(ws, audienceId)).toEqual([]);

    await expect
      .poll(() => changes(ws, audienceId), { timeout: 10_000, interval: 50 })
      .toEqual([
        { reason: "activity", entered: ["ada"], left: [] },
        { reason: "activity", entered: [], left: ["ada"] },
      ]);
  });

  it("follow one ingest in every audience counting its types as a preview of the same rule counts", async ({ ws }) => {
    await upsertMembers(ws, [
      { id: "ada", fields: { plan: "pro" } },
      { id: "bob", fields: { plan: "free" } },
      { id: "cy", fields: { plan: "pro" } },
    ]);
    await ingest(ws, [
      { memberId: "bob", type: "order.placed", occurredAt: ago(50 * DAY), properties: { amount: 90 } },
    ]);
    const rules = [
      { activity: "order.placed", count: { op: "gte", value: 2 }, withinLast: "P30D" },
      { activity: "order.placed", where: { field: "properties.amount", op: "gte", value: "50" } },
      { activity: "order.placed", notWithinLast: "P30D" },
      { not: { activity: "order.placed", withinLast: "P7D" } },
      { activity: "order.placed", count: { op: "eq", value: 1 } },
      { all: [{ field: "fields.plan", op: "eq", value: "pro" }, { activity: "order.placed" }] },
      { any: [{ activity: "session.attended", count: { op: "gte", value: 2 } }, { activity: "order.placed" }] },
    ];
    const audiences: string[] = [];
    for (const rule of rules) {
      const audienceId = await createAudience(ws);
      await setFilter(ws, audienceId, rule);
      audiences.push(audienceId);
    }
    // One request moves members in and out of each of them, evaluated together.
    await ingest(ws, [
      { memberId: "ada", type: "order.placed", occurredAt: ago(2 * DAY), properties: { amount: 20 } },
      { memberId: "ada", type: "order.placed", occurredAt: ago(3 * DAY), properties: { amount: 70 } },
      { memberId: "bob", type: "order.placed", occurredAt: ago(1 * DAY), properties: { amount: 10 } },
      { memberId: "cy", type: "session.attended", occurredAt: ago(1 * DAY) },
      { memberId: "cy", type: "session.attended", occurredAt: ago(2 * DAY) },
      { email: "dee@example.com", type: "order.placed", properties: { amount: "many" } },
    ]);
    for (const [i, rule] of rules.entries()) {
      const previewed = (await preview(ws, rule)).results.map((m) => m.id).sort();
      expect((await allMemberIds(ws, audiences[i] as string)).sort(), JSON.stringify(rule)).toEqual(previewed);
    }
  });

  it("count what `where` and the window select, and let `not` hold for members who never did it", async ({ ws }) => {
    await upsertMembers(ws, [{ id: "ada" }, { id: "bob" }, { id: "cy" }]);
    await ingest(ws, [
      { memberId: "ada", type: "order.placed", occurredAt: ago(2 * DAY), properties: { amount: 80, currency: "EUR" } },
      { memberId: "ada", type: "order.placed", occurredAt: ago(3 * DAY), properties: { amount: 120, currency: "eur" } },
      { memberId: "bob", type: "order.placed", occurredAt: ago(2 * DAY), properties: { amount: 20, currency: "EUR" } },
      {
        memberId: "bob",
        type: "order.placed",
        occurredAt: ago(200 * DAY),
        properties: { amount: 500, currency: "USD" },
      },
    ]);
    const big = { field: "properties.amount", op: "gte", value: "50" };
    const ids = async (filter: unknown) => (await preview(ws, filter)).results.map((m) => m.id).sort();
    expect(await ids({ activity: "order.placed", where: big })).toEqual(["ada", "bob"]);
    expect(await ids({ activity: "order.placed", where: big, withinLast: "P30D" })).toEqual(["ada"]);
    expect(await ids({ activity: "order.placed", where: big, count: { op: "eq", value: 2 } })).toEqual(["ada"]);
    expect(await ids({ activity: "order.placed", notWithinLast: "P30D" })).toEqual(["bob"]);
    expect(
      await ids({
        activity: "order.placed",
        where: { field: "properties.currency", op: "eq", value: "EUR" },
        count: { op: "gte", value: 2 },
      }),
    ).toEqual(["ada"]);
    // Never ordered (cy), and members made after the rule: `not`, and `count eq 0`, hold for them.
    expect(await ids({ not: { activity: "order.placed" } })).toEqual(["cy"]);
    expect(await ids({ activity: "order.placed", count: { op: "eq", value: 0 } })).toEqual(["cy"]);
    expect(await ids({ activity: "booking.made", count: { op: "lt", value: 1 } })).toEqual(["ada", "bob", "cy"]);

    const never = await createAudience(ws, "Never ordered");
    await setFilter(ws, never, { not: { activity: "order.placed" } });
    await upsertMembers(ws, [{ id: "dee" }]);
    expect((await allMemberIds(ws, never)).sort()).toEqual(["cy", "dee"]);
    // A member created by its first activity enters the audiences that activity takes it into.
    const buyers = await createAudience(ws, "Buyers");
    await setFilter(ws, buyers, { activity: "order.placed" });
    await ingest(ws, [{ email: "eve@example.com", type: "order.placed" }]);
    expect((await allMemberIds(ws, buyers)).length).toBe(3);
    expect((await allMemberIds(ws, never)).sort()).toEqual(["cy", "dee"]);
  });

  it("are counted per node, dry run and explained with the count and the latest occurrence", async ({ ws }) => {
    await upsertMembers(ws, [{ id: "ada" }, { id: "bob" }]);
    const at = new Date(Date.now() - 5 * DAY).toISOString();
    await ingest(ws, [
      { memberId: "ada", type: "session.attended", occurredAt: at },
      { memberId: "ada", type: "session.attended", occurredAt: ago(20 * DAY) },
      { memberId: "bob", type: "session.attended", occurredAt: ago(1 * DAY) },
    ]);
    const twice = { activity: "session.attended", count: { op: "gte", value: 2 }, withinLast: "P90D" };
    const counted = await preview(ws, { any: [twice, { not: twice }] }, true);
    expect(counted.nodes).toEqual([
      { pointer: "", count: 2 },
      { pointer: "/any/0", count: 1 },
      { pointer: "/any/1", count: 1 },
      { pointer: "/any/1/not", count: 1 },
    ]);
    const audienceId = await createAudience(ws);
    const dry = await ws.api.POST(`${AUDIENCE}/filter/preview`, {
      params: { path: { workspaceId: ws.id, audienceId } },
      body: { filter: twice as never },
    });
    expect(dry).toMatchObject({ memberCount: 1, entering: { count: 1, sample: ["ada"] } });
    await setFilter(ws, audienceId, twice);
    const explained = await ws.api.GET(`${AUDIENCE}/members/{memberId}/explanation`, {
      params: { path: { workspaceId: ws.id, audienceId, memberId: "ada" } },
    });
    expect(explained.rule).toEqual({
      matches: true,
      nodes: [{ pointer: "", matches: true, value: { count: 2, lastAt: at } }],
    });
    const bob = await ws.api.GET(`${AUDIENCE}/members/{memberId}/explanation`, {
      params: { path: { workspaceId: ws.id, audienceId, memberId: "bob" } },
    });
    expect(bob.rule?.nodes[0]?.value).toMatchObject({ count: 1 });
  });
});

// Ingesting activities and reading them back: the answer accounts for every entry, a bad entry
// refuses the batch with a pointer at it, a retried id is not stored twice, and a member's
// timeline and the workspace's types show exactly what is stored.
import { describe, expect } from "vitest";
import { rejectionOf } from "../support/checked-client.ts";
import {
  type ActivityInput as Entry,
  ingestActivities as ingest,
  type TestWorkspace,
  upsertMembers,
} from "../support/factories.ts";
import { it } from "../support/fixture.ts";

const DAY = 86_400_000;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

const timeline = (
  ws: TestWorkspace,
  memberId: string,
  query: { type?: string; from?: string; to?: string; limit?: number; after?: string } = {},
) =>
  ws.api.GET("/v0/workspaces/{workspaceId}/members/{memberId}/activities", {
    params: { path: { workspaceId: ws.id, memberId }, query },
  });
const types = (ws: TestWorkspace) =>
  ws.api.GET("/v0/workspaces/{workspaceId}/activity-types", { params: { path: { workspaceId: ws.id } } });
const getMember = (ws: TestWorkspace, memberId: string) =>
  ws.api.GET("/v0/workspaces/{workspaceId}/members/{memberId}", { params: { path: { workspaceId: ws.id, memberId } } });

describe("ingestActivities", () => {
  it("stores each entry once: a retried id is a duplicate, an entry past the retention is expired", async ({ ws }) => {
    const batch: Entry[] = [
      { id: "o1", memberId: "m1", type: "order.placed", occurredAt: ago(DAY), properties: { amount: 42.5 } },
      { id: "o2", memberId: "m1", type: "order.placed", occurredAt: ago(2 * DAY) },
      { id: "o1", memberId: "m1", type: "order.placed", occurredAt: ago(DAY) },
      { memberId: "m2", type: "session.attended" },
      { id: "old", memberId: "m3", type: "session.attended", occurredAt: ago(401 * DAY) },
    ];
    expect(await ingest(ws, batch)).toEqual({ accepted: 3, duplicates: 1, expired: 1, createdMembers: 2 });
    // The retry of the whole batch stores nothing new but the entry without an id.
    expect(await ingest(ws, batch)).toEqual({ accepted: 1, duplicates: 3, expired: 1, createdMembers: 0 });
    // An expired entry creates no member.
    expect((await rejectionOf(getMember(ws, "m3"))).status).toBe(404);
    expect((await timeline(ws, "m1")).results.map((a) => a.id)).toEqual(["o1", "o2"]);
  });

  it("stores the new entries of a batch beside a retried one, and the types count only what was stored", async ({
    ws,
  }) => {
    const first = { id: "r1", memberId: "r", type: "order.placed", occurredAt: ago(DAY), properties: { amount: 5 } };
    expect(await ingest(ws, [first])).toMatchObject({ accepted: 1, createdMembers: 1 });
    // The retry carries a property the stored activity has not: it is not stored, nor its key.
    const retry = { ...first, properties: { amount: 5, note: "again" } };
    const next = { id: "r2", memberId: "r", type: "order.placed", occurredAt: ago(2 * DAY), properties: { amount: 7 } };
    expect(await ingest(ws, [retry, next])).toEqual({ accepted: 1, duplicates: 1, expired: 0, createdMembers: 0 });
    expect((await types(ws)).results).toEqual([
      { type: "order.placed", count: 2, lastAt: first.occurredAt, properties: [{ key: "amount", types: ["number"] }] },
    ]);
    // A batch of retries only changes nothing.
    expect(await ingest(ws, [retry])).toEqual({ accepted: 0, duplicates: 1, expired: 0, createdMembers: 0 });
    expect((await timeline(ws, "r")).results.map((a) => a.id)).toEqual(["r1", "r2"]);
    // Beside a member to create, the retry creates none and is counted again.
    const another = { id: "r3", memberId: "r-new", type: "order.placed", occurredAt: ago(DAY) };
    expect(await ingest(ws, [retry, another])).toEqual({ accepted: 1, duplicates: 1, expired: 0, createdMembers: 1 });
    expect((await types(ws)).results.map((t) => t.count)).toEqual([3]);
  });

  it("finds members by any of their e-mails and creates the missing ones", async ({ ws }) => {
    await upsertMembers(ws, [{ id: "ada", email: "ada@example.com", alternativeEmails: ["ada@work.example"] }]);
    const result = await ingest(ws, [
      { email: "ADA@work.example", type: "session.attended" },
      { email: "linus@example.com", type: "session.attended" },
      { email: "linus@example.com", type: "order.placed" },
    ]);
    expect(result).toEqual({ accepted: 3, duplicates: 0, expired: 0, createdMembers: 1 });
    expect((await timeline(ws, "ada")).results.map((a) => a.type)).toEqual(["session.attended"]);
    const members = await ws.api.GET("/v0/workspaces/{workspaceId}/members", {
      params: { path: { workspaceId: ws.id }, query: { search: "linus" } },
    });
    const linus = members.results[0]?.id as string;
    expect((await timeline(ws, linus)).results.map((a) => a.type).sort()).toEqual(["order.placed", "session.attended"]);
  });

  const bad: [string, Record<string, unknown>, string][] = [
    ["a type with a space", { memberId: "m", type: "bad type" }, "/body/activities/1/type"],
    [
      "a property key starting with a digit",
      { memberId: "m", type: "t", properties: { "1key": 1 } },
      "/body/activities/1/properties",
    ],
    [
      "an object property value",
      { memberId: "m", type: "t", properties: { nested: { a: 1 } } },
      "/body/activities/1/properties/nested",
    ],
    [
      "a string value over 1,000 characters",
      { memberId: "m", type: "t", properties: { long: "x".repeat(1001) } },
      "/body/activities/1/properties/long",
    ],
    [
      "occurredAt without a zone",
      { memberId: "m", type: "t", occurredAt: "2026-11-23T10:15:00" },
      "/body/activities/1/occurredAt",
    ],
    [
      "occurredAt ten minutes ahead",
      { memberId: "m", type: "t", occurredAt: new Date(Date.now() + 600_000).toISOString() },
      "/body/activities/1/occurredAt",
    ],
    ["no member", { type: "t" }, "/body/activities/1"],
    ["both memberId and email", { memberId: "m", email: "m@example.com", type: "t" }, "/body/activities/1"],
    ["an unknown member", { memberId: "m", type: "t", colour: "red" }, "/body/activities/1/colour"],
    [
      "more than 4 KiB",
      {
        memberId: "m",
        type: "t",
        properties: Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`k${i}`, "y".repeat(900)])),
      },
      "/body/activities/1",
    ],
  ];
  for (const [what, entry, pointer] of bad) {
    it(`refuses an entry with ${what} (invalid_activity at its pointer) and stores nothing`, async ({ ws }) => {
      const error = await rejectionOf(ingest(ws, [{ memberId: "good", type: "t" }, entry as Entry]));
      expect(error.status).toBe(400);
      expect(error.code).toBe("invalid_activity");
      expect(error.problem?.errors?.[0]?.pointer).toBe(pointer);
      expect((await rejectionOf(getMember(ws, "good"))).status).toBe(404);
      expect((await types(ws)).results).toEqual([]);
    });
  }

  it("takes 10,000 entries in one request, a body larger than BODY_LIMIT's default", async ({ ws }) => {
    const batch: Entry[] = Array.from({ length: 10_000 }, (_, i) => ({
      id: `order-${String(i).padStart(6, "0")}`,
      memberId: `member-${i % 500}`,
      type: "order.placed",
      occurredAt: ago((i % 300) * DAY),
      properties: { amount: i, currency: "EUR" },
    }));
    expect(JSON.stringify({ activities: batch }).length).toBeGreaterThan(1_048_576);
    expect(await ingest(ws, batch)).toEqual({ accepted: 10_000, duplicates: 0, expired: 0, createdMembers: 500 });
    expect((await types(ws)).results.map((t) => [t.type, t.count])).toEqual([["order.placed", 10_000]]);
  });

  it("refuses an empty batch", async ({ ws }) => {
    const error = await rejectionOf(ingest(ws, []));
    expect(error.status).toBe(400);
    expect(error.problem?.errors?.[0]?.pointer).toBe("/body/activities");
  });
});

describe("listMemberActivities", () => {
  it("pages newest first and narrows by type and time", async ({ ws }) => {
    const entries: Entry[] = Array.from({ length: 7 }, (_, i) => ({
      id: `a${i}`,
      memberId: "t1",
      type: i % 2 === 0 ? "session.attended" : "order.placed",
      occurredAt: ago((i + 1) * DAY),
    }));
    // Two at the same instant: the one stored later comes first.
    entries.push({ id: "same", memberId: "t1", type: "order.placed", occurredAt: entries[0]?.occurredAt as string });
    await ingest(ws, entries);
    const ids: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await timeline(ws, "t1", { limit: 3, ...(after ? { after } : {}) });
      ids.push(...page.results.map((a) => a.id as string));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(ids).toEqual(["same", "a0", "a1", "a2", "a3", "a4", "a5", "a6"]);
    const orders = await timeline(ws, "t1", { type: "order.placed" });
    expect(orders.results.map((a) => a.id)).toEqual(["same", "a1", "a3", "a5"]);
    const window = await timeline(ws, "t1", { from: ago(4.5 * DAY), to: ago(1.5 * DAY) });
    expect(window.results.map((a) => a.id)).toEqual(["a1", "a2", "a3"]);
    expect(window.results[0]).toEqual({
      id: "a1",
      type: "order.placed",
      occurredAt: entries[1]?.occurredAt,
      properties: {},
    });
  });

  it("answers 404 for an unknown member, an empty page for a member without activities", async ({ ws }) => {
    expect((await rejectionOf(timeline(ws, "nobody"))).code).toBe("member_not_found");
    await upsertMembers(ws, [{ id: "quiet" }]);
    expect(await timeline(ws, "quiet")).toEqual({ results: [], pageInfo: { hasNextPage: false, endCursor: "" } });
  });

  it("refuses a cursor of another listing", async ({ ws }) => {
    await upsertMembers(ws, [{ id: "c1" }]);
    const error = await rejectionOf(timeline(ws, "c1", { after: "eyJzIjoibWVtYmVycyJ9" }));
    expect(error.code).toBe("invalid_cursor");
  });
});

describe("listActivityTypes and deleting members", () => {
  it("counts exactly, keeps the latest occurredAt and the property types, and forgets a deleted member's", async ({
    ws,
  }) => {
    const latest = ago(DAY);
    await ingest(ws, [
      { memberId: "p1", type: "order.placed", occurredAt: ago(3 * DAY), properties: { amount: 10, currency: "EUR" } },
      { memberId: "p2", type: "order.placed", occurredAt: latest, properties: { amount: "12", gift: true } },
      { memberId: "p2", type: "session.attended" },
    ]);
    await ingest(ws, [{ memberId: "p1", type: "order.placed", occurredAt: ago(2 * DAY) }]);
    expect((await types(ws)).results[0]).toEqual({
      type: "order.placed",
      count: 3,
      lastAt: latest,
      properties: [
        { key: "amount", types: ["number", "string"] },
        { key: "currency", types: ["string"] },
        { key: "gift", types: ["boolean"] },
      ],
    });
    await ws.api.DELETE("/v0/workspaces/{workspaceId}/members", {
      params: { path: { workspaceId: ws.id } },
      body: { memberIds: ["p2"] },
    });
    const after = await types(ws);
    expect(after.results.map((t) => [t.type, t.count])).toEqual([["order.placed", 2]]);
    // A member created again under the same id starts with no activities.
    await upsertMembers(ws, [{ id: "p2" }]);
    expect((await timeline(ws, "p2")).results).toEqual([]);
  });

  it("forgets a deleted member's client ids with its activities", async ({ ws }) => {
    const entry = { id: "d1", memberId: "d", type: "session.attended", occurredAt: ago(DAY) };
    expect(await ingest(ws, [entry])).toMatchObject({ accepted: 1 });
    await ws.api.DELETE("/v0/workspaces/{workspaceId}/members", {
      params: { path: { workspaceId: ws.id } },
      body: { memberIds: ["d"] },
    });
    expect(await ingest(ws, [entry])).toEqual({ accepted: 1, duplicates: 0, expired: 0, createdMembers: 1 });
    expect((await timeline(ws, "d")).results.map((a) => a.id)).toEqual(["d1"]);
  });
});

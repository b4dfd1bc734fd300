// Following the feed: pages, filters, cursors, the head, batching of large changes, retention.
import { describe, expect } from "vitest";
import { eventRepo } from "../../src/features/events/event-repo.ts";
import { rejectionOf } from "../support/checked-client.ts";
import { addMembers, createAudience } from "../support/factories.ts";
import { it } from "../support/fixture.ts";
import { settledFeed } from "./event-support.ts";

const FEED = "/v0/workspaces/{workspaceId}/events";
const LATEST = "/v0/workspaces/{workspaceId}/events/latest";

describe("listEvents", () => {
  it("pages in sequence order; endCursor continues where the page ended", async ({ api, workspaceId, ws }) => {
    for (const name of ["A", "B", "C", "D", "E"]) await createAudience(ws, name);
    const all = await settledFeed(api, workspaceId, 5);

    const first = await api.GET(FEED, { params: { path: { workspaceId }, query: { limit: 2 } } });
    expect(first.results.map((e) => e.sequence)).toEqual([1, 2]);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = await api.GET(FEED, {
      params: { path: { workspaceId }, query: { limit: 3, after: first.pageInfo.endCursor } },
    });
    expect(second.results).toEqual(all.slice(2));
    expect(second.pageInfo.hasNextPage).toBe(false);

    // At the head: nothing new, and the same place to continue from.
    const empty = await api.GET(FEED, {
      params: { path: { workspaceId }, query: { after: second.pageInfo.endCursor } },
    });
    expect(empty).toEqual({ results: [], pageInfo: { hasNextPage: false, endCursor: second.pageInfo.endCursor } });
    expect((await api.GET(LATEST, { params: { path: { workspaceId } } })).cursor).toBe(second.pageInfo.endCursor);
  });

  it("reads newest first with before: from the head's cursor down to the oldest kept", async ({
    api,
    workspaceId,
    ws,
  }) => {
    const readers = await createAudience(ws, "Readers");
    for (const name of ["B", "C", "D"]) await createAudience(ws, name);
    await addMembers(ws, readers, { memberIds: ["m1"] });
    const all = await settledFeed(api, workspaceId, 5);
    const head = (await api.GET(LATEST, { params: { path: { workspaceId } } })).cursor;

    const newest = await api.GET(FEED, { params: { path: { workspaceId }, query: { before: head, limit: 2 } } });
    const reversed = [...all].reverse();
    expect(newest.results).toEqual(reversed.slice(0, 2));
    expect(newest.pageInfo.hasNextPage).toBe(true);
    const older = await api.GET(FEED, {
      params: { path: { workspaceId }, query: { before: newest.pageInfo.endCursor, limit: all.length - 2 } },
    });
    expect(older.results).toEqual(reversed.slice(2));
    expect(older.pageInfo.hasNextPage).toBe(false);
    const none = await api.GET(FEED, {
      params: { path: { workspaceId }, query: { before: older.pageInfo.endCursor } },
    });
    expect(none.results).toEqual([]);
    expect(none.pageInfo.hasNextPage).toBe(false);

    // Filters apply as they do going forward.
    const changes = await api.GET(FEED, {
      params: { path: { workspaceId }, query: { before: head, types: ["audience.created"], audienceId: readers } },
    });
    expect(changes.results.map((e) => e.sequence)).toEqual([all[0]?.sequence]);

    // One direction at a time.
    const both = await rejectionOf(
      api.GET(FEED, { params: { path: { workspaceId }, query: { before: head, after: head } } }),
    );
    expect([both.status, both.code, both.problem?.errors?.[0]?.pointer]).toEqual([
      400,
      "invalid_request",
      "/query/before",
    ]);
  });

  it("filters by type and audience, and a filtered page's end skips what did not match", async ({
    api,
    workspaceId,
    ws,
  }) => {
    const readers = await createAudience(ws, "Readers");
    const other = await createAudience(ws, "Other");
    await addMembers(ws, readers, { memberIds: ["a"] });
    await addMembers(ws, other, { memberIds: ["b"] });
    await settledFeed(api, workspaceId, 6);

    const changes = await api.GET(FEED, {
      params: { path: { workspaceId }, query: { types: ["audience.members_changed"], audienceId: readers } },
    });
    expect(changes.results.map((e) => [e.sequence, e.type])).toEqual([[4, "audience.members_changed"]]);
    const created = await api.GET(FEED, {
      params: { path: { workspaceId }, query: { types: ["members.created", "audience.created"] } },
    });
    expect(created.results.map((e) => e.type)).toEqual([
      "audience.created",
      "audience.created",
      "members.created",
      "members.created",
    ]);
    // Both read to the head, so following either from its end sees only what comes next.
    const head = (await api.GET(LATEST, { params: { path: { workspaceId } } })).cursor;
    expect([changes.pageInfo.endCursor, created.pageInfo.endCursor]).toEqual([head, head]);
  });

  it("splits a large change into consecutive events of at most 1,000 ids", async ({ api, workspaceId, ws }) => {
    const audienceId = await createAudience(ws);
    const ids = Array.from({ length: 2_500 }, (_, i) => `m${String(i).padStart(4, "0")}`);
    await addMembers(ws, audienceId, { memberIds: ids });
    const events = await settledFeed(api, workspaceId, 7);
    expect(events.map((e) => [e.sequence, e.type])).toEqual([
      [1, "audience.created"],
      [2, "members.created"],
      [3, "members.created"],
      [4, "members.created"],
      [5, "audience.members_changed"],
      [6, "audience.members_changed"],
      [7, "audience.members_changed"],
    ]);
    const entered = events.slice(4).map((e) => (e.data as { entered: string[] }).entered);
    expect(entered.map((batch) => batch.length)).toEqual([1000, 1000, 500]);
    expect(entered.flat()).toEqual(ids);
  });

  it("refuses a cursor of another listing, a forged one and one past the head (400)", async ({
    api,
    workspaceId,
    ws,
    admin,
  }) => {
    await createAudience(ws);
    await settledFeed(api, workspaceId, 1);
    const other = await admin.POST("/v0/workspaces", { body: { name: "Other" } });
    const foreign = btoa(JSON.stringify({ s: `events:${other.id}`, q: 0 })).replace(/=+$/, "");
    const future = btoa(JSON.stringify({ s: `events:${workspaceId}`, q: 99 })).replace(/=+$/, "");
    for (const after of [foreign, "not a cursor", "eyJ4IjoxfQ", future]) {
      const error = await rejectionOf(api.GET(FEED, { params: { path: { workspaceId }, query: { after } } }));
      expect([error.status, error.code]).toEqual([400, "invalid_cursor"]);
    }
  });

  it("answers 410 cursor_expired for a cursor older than the events it keeps", async ({
    api,
    workspaceId,
    ws,
    server,
  }) => {
    await createAudience(ws, "Old");
    await settledFeed(api, workspaceId, 1);
    const beginning = (await api.GET(FEED, { params: { path: { workspaceId }, query: { limit: 1 } } })).results;
    expect(beginning).toHaveLength(1);
    const fromStart = btoa(JSON.stringify({ s: `events:${workspaceId}`, q: 0 })).replace(/=+$/, "");
    await createAudience(ws, "New");
    await settledFeed(api, workspaceId, 2);
    const head = (await api.GET(LATEST, { params: { path: { workspaceId } } })).cursor;

    // Retention removes everything written so far (as if EVENT_RETENTION_DAYS had passed).
    await eventRepo.purgeBefore(server.store.db, new Date(Date.now() + 60_000));
    const error = await rejectionOf(api.GET(FEED, { params: { path: { workspaceId }, query: { after: fromStart } } }));
    expect([error.status, error.code]).toEqual([410, "cursor_expired"]);
    // A cursor at the last removed event is still good: nothing after it was lost.
    const page = await api.GET(FEED, { params: { path: { workspaceId }, query: { after: head } } });
    expect(page).toEqual({ results: [], pageInfo: { hasNextPage: false, endCursor: head } });
  });
});

// How many round trips a read request sends the database (issue 47): pages of an audience's
// members whatever its density and the page's place, a workspace's members, searches,
// listAudiences, an audience and the event feed, counted where the composition meets the store
// (test/support/round-trips.ts). Counts, not timings: a statement added to a read's path fails
// here, with the statements listed. On the embedded store, and on PostgreSQL when
// TEST_DATABASE_URL is set. Background work is off (workers: false) and so is the rate limit, so
// that only the request is counted; the relay is run by hand to fill the feed.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeCursor } from "../../src/domain/cursor.ts";
import { createEventRelay } from "../../src/features/events/event-relay.ts";
import { eventRepo } from "../../src/features/events/event-repo.ts";
import { addMembers, createAudience, createWorkspace, type TestWorkspace } from "../support/factories.ts";
import type { LiveServer } from "../support/live-server.ts";
import { type CountingStore, type RoundTrips, startCountingServer } from "../support/round-trips.ts";

/**
 * 30,000 members, created in order, so that member numbers follow the ids' order and reach a
 * fourth bitset chunk (8,192 numbers each).
 */
const MEMBER_COUNT = 30_000;
const idOf = (n: number) => `m${String(n).padStart(5, "0")}`;
const range = (from: number, count: number, step = 1) => Array.from({ length: count }, (_, i) => from + i * step);
/** A page of this many: the members of a sparse audience lie past a guess of the next 4 × (limit + 1) numbers. */
const LIMIT = 10;

let server: LiveServer;
let counting: CountingStore;
let ws: TestWorkspace;
/** Every member. */
let everyone: string;
/** Every 50th member: a page spans 500 member numbers. */
let sparse: string;
/** One member in each of the four chunks: a page reads past the first two chunks. */
let scattered: string;
/** A member with an e-mail, to search for, and one without. */
let named: string;

beforeAll(async () => {
  ({ server, counting } = await startCountingServer());
  ws = await createWorkspace(server);
  everyone = await createAudience(ws, "Everyone");
  sparse = await createAudience(ws, "Sparse");
  scattered = await createAudience(ws, "Scattered");
  for (let from = 0; from < MEMBER_COUNT; from += 10_000) {
    await addMembers(ws, everyone, { memberIds: range(from, 10_000).map(idOf) });
    await addMembers(ws, sparse, { memberIds: range(from, 200, 50).map(idOf) });
  }
  await addMembers(ws, scattered, { memberIds: [100, 9_000, 17_500, 26_000].map(idOf) });
  named = await createAudience(ws, "Named");
  await addMembers(ws, named, {
    memberIds: [idOf(7)],
    members: [{ id: "ada", email: "ada.lovelace@example.com", fields: { region: "north" } }],
  });
  // The writes' events into the feed.
  const relay = createEventRelay({ store: server.store, events: eventRepo });
  for (let i = 0; i < 100 && (await relay.publish(ws.id)); i++) {}
}, 300_000);

afterAll(async () => {
  await server?.close();
});

/** What a failing assertion shows: the count and the statements, in order. */
const counted = (trips: RoundTrips) => ({ count: trips.count, sent: trips.sent });
const ONE_ROUND_TRIP = { count: 1, sent: expect.any(Array) };
/**
 * A page of a sparse audience, whose guess finds no full page: one round trip on PostgreSQL,
 * where the statement spells the page's numbers out; on the embedded store the process reads the
 * members by number in a second statement (after more, 16 chunks at a time, when two chunks hold
 * too few), as planning and running that part cost PGlite more than the call saves
 * (member-page-repo.ts pageAudience). An audience's end is one round trip on both.
 */
const readOn = (embedded: number) => ({
  count: server.store.kind === "postgres" ? 1 : embedded,
  sent: expect.any(Array),
});

/** The request's round trips (the key's lookup, cached by the first request, aside) and its answer. */
async function tripsOf<T>(request: () => Promise<T>): Promise<{ trips: RoundTrips; answer: T }> {
  let answer: T | undefined;
  const trips = await counting.count(async () => {
    answer = await request();
  });
  return { trips, answer: answer as T };
}

type PageQuery = { limit?: number; after?: string; before?: string; search?: string; sortDirection?: "ASC" | "DESC" };
const membersOf = (audienceId: string, query: PageQuery) =>
  ws.api.GET("/v0/workspaces/{workspaceId}/audiences/{audienceId}/members", {
    params: { path: { workspaceId: ws.id, audienceId }, query: { limit: LIMIT, sortDirection: "ASC", ...query } },
  });

/** A cursor of the audience's listing at member n (a page after it starts past n). */
async function cursorAt(audienceId: string, n: number): Promise<string> {
  const member = await ws.api.GET("/v0/workspaces/{workspaceId}/members/{memberId}", {
    params: { path: { workspaceId: ws.id, memberId: idOf(n) } },
  });
  return encodeCursor(audienceId, { createdAt: new Date(member.createdAt), id: member.id });
}

const idsOf = (page: { results: { id: string }[] }) => page.results.map((m) => m.id);

describe("round trips of a read: an audience's members", () => {
  it("the first page of an audience holding every member", async () => {
    const { trips, answer } = await tripsOf(() => membersOf(everyone, {}));
    expect(idsOf(answer)).toEqual(range(0, LIMIT).map(idOf));
    expect(answer.totalCount).toBe(MEMBER_COUNT);
    expect(counted(trips)).toEqual(ONE_ROUND_TRIP);
  });

  it("the first page of a sparse audience, its members further apart than the page's guess", async () => {
    const { trips, answer } = await tripsOf(() => membersOf(sparse, {}));
    expect(idsOf(answer)).toEqual(range(0, LIMIT, 50).map(idOf));
    expect(answer.totalCount).toBe(600);
    expect(counted(trips)).toEqual(readOn(2));
  });

  it("a page of an audience whose members are chunks apart", async () => {
    const { trips, answer } = await tripsOf(() => membersOf(scattered, { limit: 3 }));
    expect(idsOf(answer)).toEqual([100, 9_000, 17_500].map(idOf));
    expect(answer.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    expect(counted(trips)).toEqual(readOn(3));
    const newest = await tripsOf(() => membersOf(scattered, { limit: 3, sortDirection: "DESC" }));
    expect(idsOf(newest.answer)).toEqual([26_000, 17_500, 9_000].map(idOf));
    expect(counted(newest.trips)).toEqual(readOn(3));
  });

  it("a deep page after a cursor, dense and sparse", async () => {
    const after = await cursorAt(everyone, 24_999);
    const dense = await tripsOf(() => membersOf(everyone, { after }));
    expect(idsOf(dense.answer)).toEqual(range(25_000, LIMIT).map(idOf));
    expect(dense.answer.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
    expect(counted(dense.trips)).toEqual(ONE_ROUND_TRIP);

    const thin = await cursorAt(sparse, 20_000);
    const deepSparse = await tripsOf(() => membersOf(sparse, { after: thin }));
    expect(idsOf(deepSparse.answer)).toEqual(range(20_050, LIMIT, 50).map(idOf));
    expect(deepSparse.answer.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
    expect(counted(deepSparse.trips)).toEqual(readOn(2));
  });

  it("the last page, and the page before a cursor", async () => {
    const after = await cursorAt(everyone, MEMBER_COUNT - 5);
    const last = await tripsOf(() => membersOf(everyone, { after }));
    expect(idsOf(last.answer)).toEqual(range(MEMBER_COUNT - 4, 4).map(idOf));
    expect(last.answer.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    expect(counted(last.trips)).toEqual(ONE_ROUND_TRIP);

    const before = await cursorAt(sparse, 20_000);
    const back = await tripsOf(() => membersOf(sparse, { before }));
    expect(idsOf(back.answer)).toEqual(range(19_500, LIMIT, 50).map(idOf));
    expect(back.answer.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
    expect(counted(back.trips)).toEqual(readOn(2));
  });

  it("a search among an audience's members", async () => {
    const { trips, answer } = await tripsOf(() => membersOf(named, { search: "Lovelace" }));
    expect(idsOf(answer)).toEqual(["ada"]);
    expect(answer.totalCount).toBe(1);
    expect(counted(trips)).toEqual(ONE_ROUND_TRIP);
  });
});

describe("round trips of a read: the rest", () => {
  it("a page of the workspace's members, and a search among them", async () => {
    const page = await tripsOf(() =>
      ws.api.GET("/v0/workspaces/{workspaceId}/members", {
        params: { path: { workspaceId: ws.id }, query: { limit: LIMIT } },
      }),
    );
    expect(idsOf(page.answer)).toEqual(["ada", ...range(MEMBER_COUNT - 1, LIMIT - 1, -1).map(idOf)]);
    expect(counted(page.trips)).toEqual(ONE_ROUND_TRIP);

    const search = await tripsOf(() =>
      ws.api.GET("/v0/workspaces/{workspaceId}/members", {
        params: { path: { workspaceId: ws.id }, query: { search: "lovelace" } },
      }),
    );
    expect(idsOf(search.answer)).toEqual(["ada"]);
    expect(counted(search.trips)).toEqual(ONE_ROUND_TRIP);
  });

  it("a page of listAudiences", async () => {
    const { trips, answer } = await tripsOf(() =>
      ws.api.GET("/v0/workspaces/{workspaceId}/audiences", {
        params: { path: { workspaceId: ws.id }, query: { limit: 2, sortDirection: "ASC" } },
      }),
    );
    expect(answer.results.map((a) => a.id)).toEqual([everyone, sparse]);
    expect(answer.pageInfo?.hasNextPage).toBe(true);
    expect(counted(trips)).toEqual(ONE_ROUND_TRIP);
  });

  it("an audience, read for the first time and with its stats", async () => {
    const audienceId = await createAudience(ws, "Read once");
    const get = (include?: "stats") =>
      ws.api.GET("/v0/workspaces/{workspaceId}/audiences/{audienceId}", {
        params: { path: { workspaceId: ws.id, audienceId }, query: include ? { include } : {} },
      });
    const first = await tripsOf(() => get());
    expect(first.answer).toEqual({ id: audienceId, name: "Read once" });
    expect(counted(first.trips)).toEqual(ONE_ROUND_TRIP);
    const stats = await tripsOf(() => get("stats"));
    expect(stats.answer).toMatchObject({ id: audienceId, memberCount: 0 });
    expect(counted(stats.trips)).toEqual(ONE_ROUND_TRIP);
  });

  it("a page of the event feed from its start", async () => {
    const { trips, answer } = await tripsOf(() =>
      ws.api.GET("/v0/workspaces/{workspaceId}/events", {
        params: { path: { workspaceId: ws.id }, query: { limit: 5 } },
      }),
    );
    expect(answer.results.map((e) => e.type)[0]).toBe("audience.created");
    expect(answer.pageInfo.hasNextPage).toBe(true);
    expect(counted(trips)).toEqual(ONE_ROUND_TRIP);
  });
});

// How many round trips a write sends the database (issue 47): a member's PATCH under 100 rules,
// an add and a remove by hand, a rule's change, an upsert, an activity and the relay's
// publishing, counted where the composition meets the store (test/support/round-trips.ts).
// Counts, not timings: a statement added to a write's path fails here, with the statements
// listed. On the embedded store, and on PostgreSQL when TEST_DATABASE_URL is set. Background
// work is off (workers: false) and so is the rate limit (its flush writes through the store), so
// that only the request is counted.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEventRelay } from "../../src/features/events/event-relay.ts";
import { eventRepo } from "../../src/features/events/event-repo.ts";
import {
  addMembers,
  createAudience,
  createAudiences,
  createWorkspace,
  ingestActivities,
  type TestWorkspace,
} from "../support/factories.ts";
import type { LiveServer } from "../support/live-server.ts";
import { type CountingStore, type RoundTrips, startCountingServer } from "../support/round-trips.ts";

/** The bench's rules (scripts/bench/scenarios/scattered-updates.ts): a region, or a tier within regions. */
const ruleOf = (i: number) =>
  i < 50
    ? { field: "fields.region", op: "eq", value: `r${i % 50}` }
    : {
        all: [
          { field: "fields.tier", op: "eq", value: `t${i % 5}` },
          { field: "fields.region", op: "startsWith", value: `r${i % 4}` },
        ],
      };

let server: LiveServer;
let counting: CountingStore;
let ws: TestWorkspace;
let manual: string;
const path = { path: { workspaceId: "" } };

beforeAll(async () => {
  ({ server, counting } = await startCountingServer());
  ws = await createWorkspace(server);
  path.path.workspaceId = ws.id;
  const ruled = await createAudiences(ws, 100);
  for (const [i, audienceId] of ruled.entries()) {
    await ws.api.PUT("/v0/workspaces/{workspaceId}/audiences/{audienceId}/filter", {
      params: { path: { workspaceId: ws.id, audienceId } },
      body: { filter: ruleOf(i) as never },
    });
  }
  manual = await createAudience(ws);
  await ws.api.POST("/v0/workspaces/{workspaceId}/members", {
    params: path,
    body: {
      members: [
        { id: "ada", email: "ada@example.com", fields: { region: "r1", tier: "t1" } },
        { id: "bob", email: "bob@example.com", fields: { region: "r2", tier: "t2" } },
      ],
    },
  });
}, 120_000);

afterAll(async () => {
  await server?.close();
});

/**
 * The round trips expected: on PostgreSQL a transaction's BEGIN rides with its first statement,
 * and its COMMIT with its last (the write's closing statement, or the statement that carries it
 * and commits), a statement whose answer is not read with the one after it (pg/pg-pipeline.ts);
 * on the embedded store each is a call of its own.
 */
const roundTrips = (postgres: number, embedded: number) => ({
  count: server.store.kind === "postgres" ? postgres : embedded,
  sent: expect.any(Array),
});
/** What a failing assertion shows: the count and the statements, in order. */
const counted = (trips: RoundTrips) => ({ count: trips.count, sent: trips.sent });

/** The request's round trips, the key's lookup (cached by the first request) aside. */
const tripsOf = (request: () => Promise<unknown>): Promise<RoundTrips> => counting.count(request);

describe("round trips of a write", () => {
  it("PATCH of one member under 100 rules", async () => {
    const patch = (region: string) =>
      ws.api.PATCH("/v0/workspaces/{workspaceId}/members/{memberId}", {
        params: { path: { workspaceId: ws.id, memberId: "ada" } },
        body: { fields: { region } },
      });
    await patch("r3");
    const trips = await tripsOf(() => patch("r7"));
    expect(counted(trips)).toEqual(roundTrips(2, 4));
  });

  it("adding a member to an audience by hand", async () => {
    const trips = await tripsOf(() => addMembers(ws, manual, { memberIds: ["bob"] }));
    expect(counted(trips)).toEqual(roundTrips(2, 4));
  });

  it("adding new ids by hand where no audience has a rule", async () => {
    const plain = await createWorkspace(server);
    const audienceId = await createAudience(plain);
    const trips = await tripsOf(() => addMembers(plain, audienceId, { memberIds: ["new1", "new2"] }));
    expect(counted(trips)).toEqual(roundTrips(3, 5));
  });

  it("removing a member from an audience by hand", async () => {
    await addMembers(ws, manual, { memberIds: ["ada"] });
    const trips = await tripsOf(() =>
      ws.api.DELETE("/v0/workspaces/{workspaceId}/audiences/{audienceId}/members", {
        params: { path: { workspaceId: ws.id, audienceId: manual } },
        body: { memberIds: ["ada"] },
      }),
    );
    expect(counted(trips)).toEqual(roundTrips(2, 4));
  });

  it("a rule's follow-up (PUT filter)", async () => {
    const audienceId = await createAudience(ws);
    const trips = await tripsOf(() =>
      ws.api.PUT("/v0/workspaces/{workspaceId}/audiences/{audienceId}/filter", {
        params: { path: { workspaceId: ws.id, audienceId } },
        body: { filter: { field: "fields.region", op: "eq", value: "r2" } as never },
      }),
    );
    expect(counted(trips)).toEqual(roundTrips(2, 5));
  });

  it("upserting a member by e-mail under 100 rules (POST members)", async () => {
    const trips = await tripsOf(() =>
      ws.api.POST("/v0/workspaces/{workspaceId}/members", {
        params: path,
        body: { members: [{ email: "ADA@example.com", fields: { region: "r4", tier: "t4" } }] },
      }),
    );
    expect(counted(trips)).toEqual(roundTrips(2, 4));
  });

  it("an activity ingest, with a rule that counts activities", async () => {
    const audienceId = await createAudience(ws);
    await ws.api.PUT("/v0/workspaces/{workspaceId}/audiences/{audienceId}/filter", {
      params: { path: { workspaceId: ws.id, audienceId } },
      body: { filter: { activity: "order.placed" } as never },
    });
    const trips = await tripsOf(() =>
      ingestActivities(ws, [{ memberId: "ada", type: "order.placed", occurredAt: new Date().toISOString() }]),
    );
    expect(counted(trips)).toEqual(roundTrips(3, 5));
  });

  it("the relay publishing one write", async () => {
    const relay = createEventRelay({ store: counting.store, events: eventRepo });
    // Whatever the writes above left in the outbox first.
    await relay.publish(ws.id);
    await addMembers(ws, manual, { memberIds: ["ada"] });
    const trips = await tripsOf(() => relay.publish(ws.id));
    expect(counted(trips)).toEqual(roundTrips(2, 4));
  });
});

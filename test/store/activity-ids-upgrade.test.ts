// Activities stored before their client ids had a table of their own (activity_ids) keep their
// ids through the upgrade: an ingest that sends one of them again counts it as a duplicate and
// stores it no second time. On the embedded store, and on PostgreSQL when TEST_DATABASE_URL is set.
import { afterEach, describe, expect, it } from "vitest";
import { activityReadRepo } from "../../src/features/activities/activity-read-repo.ts";
import { createActivityService } from "../../src/features/activities/activity-service.ts";
import { createIngestCheck } from "../../src/features/activities/ingest-check.ts";
import { activityRepo } from "../../src/features/membership/activity-repo.ts";
import { memberRepo } from "../../src/features/membership/member-repo.ts";
import type { Store } from "../../src/platform/db/database.ts";
import { oldStore } from "../support/old-store.ts";
import { storeMembership } from "../support/store-membership.ts";

const ACTIVITY_IDS = "20261212000000_activity_ids";
const WS = "ws_activity_ids";
const DAY = 86_400_000;
const NOW = Date.now();
const ago = (days: number) => new Date(NOW - days * DAY).toISOString();

/** A member and two of its activities (one with a client id), as the previous version stored them. */
const OLD_DATA = `
  INSERT INTO workspaces (workspace_id, name, member_seq) VALUES ('${WS}', 'Ids', 1);
  INSERT INTO members (workspace_id, id, seq, created_at, folded)
  VALUES ('${WS}', 'm1', 1, now(), '{"id": "m1", "email": null, "emails": [], "fields": {}}');
  INSERT INTO activity_types (workspace_id, type, count, last_at) VALUES ('${WS}', 'order.placed', 2, '${ago(1)}');
  INSERT INTO activities (workspace_id, member_seq, occurred_at, type_id, id)
  SELECT '${WS}', 1, v.at::timestamptz, t.type_id, v.id FROM activity_types AS t,
    (VALUES ('${ago(1)}', 'o1'), ('${ago(2)}', NULL)) AS v(at, id)
  WHERE t.workspace_id = '${WS}';
`;

const kinds: ("embedded" | "postgres")[] = ["embedded"];
if (process.env.TEST_DATABASE_URL) kinds.push("postgres");

describe.each(kinds)("client ids stored before activity_ids (%s)", { timeout: 60_000 }, (kind) => {
  let store: Store | undefined;
  let cleanUp: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await store?.close();
    await cleanUp?.();
  });

  it("are still found: a retry of one is a duplicate", async () => {
    const old = await oldStore(kind, { before: ACTIVITY_IDS, data: OLD_DATA, name: "activity_ids_test" });
    cleanUp = old.cleanUp;
    store = await old.open();
    const activities = createActivityService({
      store,
      membership: storeMembership(store),
      members: memberRepo,
      activities: activityRepo,
      reads: activityReadRepo,
      check: createIngestCheck(),
      retentionDays: 400,
    });
    const entry = (id: string, days: number) => ({ id, memberId: "m1", type: "order.placed", occurredAt: ago(days) });
    expect(await activities.ingest(WS, { activities: [entry("o1", 1), entry("o2", 3)] })).toEqual({
      accepted: 1,
      duplicates: 1,
      expired: 0,
      createdMembers: 0,
    });
    expect((await activities.timeline(WS, "m1", {})).results.map((a) => a.id)).toEqual(["o1", null, "o2"]);
    expect((await activities.types(WS)).results.map((t) => [t.type, t.count])).toEqual([["order.placed", 3]]);
  });
});

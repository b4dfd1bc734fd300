// On PostgreSQL activities are partitioned by month of occurredAt. The purge creates this month
// and the next two, and the month of any row the default partition took (moving it), drops the
// months wholly past the retention and deletes the older rows left; the embedded store keeps
// every activity in the default partition and only deletes. Either way activity_types' counts
// stay exact and a member's timeline shows exactly what is kept. With a clock the test moves, on
// the embedded store and on PostgreSQL when TEST_DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activityPartitionRepo } from "../../src/features/activities/activity-partitions-repo.ts";
import { createActivityPurge } from "../../src/features/activities/activity-purge.ts";
import { activityReadRepo } from "../../src/features/activities/activity-read-repo.ts";
import { createActivityService } from "../../src/features/activities/activity-service.ts";
import { createIngestCheck } from "../../src/features/activities/ingest-check.ts";
import { workspaceRepo } from "../../src/features/admin/workspace-repo.ts";
import { activityRepo } from "../../src/features/membership/activity-repo.ts";
import { memberRepo } from "../../src/features/membership/member-repo.ts";
import type { Store } from "../../src/platform/db/database.ts";
import { openTestStore } from "../support/live-server.ts";
import { storeMembership } from "../support/store-membership.ts";

const DAY = 86_400_000;
const RETENTION_DAYS = 400;

describe("activity partitions and the retention", () => {
  const ws = "ws_activity_partitions";
  let store: Store;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ store, close } = await openTestStore());
    await workspaceRepo.create(store.db, { id: ws, name: ws });
  });
  afterAll(() => close());

  it("keeps exactly the activities within the retention as months are created and dropped", async () => {
    let now = Date.UTC(2026, 10, 15, 12);
    const clock = () => now;
    const membership = storeMembership(store, {
      records: { record: async () => {}, inStatement: () => undefined },
      clock,
    });
    const activities = createActivityService({
      store,
      membership,
      members: memberRepo,
      activities: activityRepo,
      reads: activityReadRepo,
      check: createIngestCheck(),
      retentionDays: RETENTION_DAYS,
      clock,
    });
    const purge = createActivityPurge({
      store,
      partitions: activityPartitionRepo,
      retentionDays: RETENTION_DAYS,
      partitioned: store.kind === "postgres",
      intervalMs: 3_600_000,
      onError: (error) => {
        throw error;
      },
      clock,
    });
    const partitionNames = async () =>
      (await store.transaction((tx) => activityPartitionRepo.months(tx))).map((m) => m.name).sort();
    const inDefault = async () =>
      (await store.db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM activities_default`)[0]?.n;
    const count = async () => (await activities.types(ws)).results[0]?.count ?? 0;
    const kept = async () => {
      const page = await activities.timeline(ws, "m1", { limit: 1000 });
      return page.results.map((a) => a.id);
    };

    // A first run with no activities: this month and the next two, nothing older.
    const partitioned = store.kind === "postgres";
    await purge.run();
    expect(await partitionNames()).toEqual(
      partitioned ? ["activities_y2026m11", "activities_y2026m12", "activities_y2027m01"] : [],
    );

    // One activity every 10 days over the retention: all but this month's go to the default
    // partition, their months not existing yet.
    const ages = Array.from({ length: 40 }, (_, i) => i * 10 + 5);
    const entries = ages.map((age) => ({
      id: `a${age}`,
      memberId: "m1",
      type: "session.attended",
      occurredAt: new Date(now - age * DAY).toISOString(),
    }));
    expect(await activities.ingest(ws, { activities: entries })).toMatchObject({ accepted: 40 });
    expect(await inDefault()).toBe(partitioned ? 39 : 40);

    await purge.run();
    // The months of those rows exist now, and the rows moved into them.
    if (partitioned) {
      const names = await partitionNames();
      expect(names[0]).toBe("activities_y2025m10");
      expect(names.at(-1)).toBe("activities_y2027m01");
      expect(await inDefault()).toBe(0);
    }
    expect(await count()).toBe(40);
    expect(await kept()).toEqual(ages.map((age) => `a${age}`));

    // 100 days later: the months wholly older than the cutoff are gone, and so is every older row.
    now += 100 * DAY;
    await purge.run();
    const left = ages.filter((age) => age + 100 <= RETENTION_DAYS);
    expect(await kept()).toEqual(left.map((age) => `a${age}`));
    expect(await count()).toBe(left.length);
    if (partitioned) {
      const cutoffMonth = new Date(now - RETENTION_DAYS * DAY);
      const month = String(cutoffMonth.getUTCMonth() + 1).padStart(2, "0");
      expect((await partitionNames())[0]).toBe(`activities_y${cutoffMonth.getUTCFullYear()}m${month}`);
      expect((await partitionNames()).at(-1)).toBe("activities_y2027m04");
    } else {
      expect(await inDefault()).toBe(left.length);
    }

    // A run with nothing to do changes nothing.
    await purge.run();
    expect(await count()).toBe(left.length);

    // The client ids went with their activities (the youngest gone in the cutoff's month, the
    // oldest in a dropped one): sent again within the retention they are stored; a kept one is not.
    const gone = ages.filter((age) => age + 100 > RETENTION_DAYS).map((age) => `a${age}`);
    const again = [gone[0], gone.at(-1), `a${left[0]}`].map((id) => ({
      id,
      memberId: "m1",
      type: "session.attended",
      occurredAt: new Date(now - DAY).toISOString(),
    }));
    expect(await activities.ingest(ws, { activities: again })).toMatchObject({ accepted: 2, duplicates: 1 });
    expect(await count()).toBe(left.length + 2);
  });
});

// The size history's buckets: hours as written, days as sums of their hours with the size at the
// end of the last one (a row of their own, written beside the hour's), bounded by from and to on
// the bucket's start; rows past the retention go, a day's once the whole day is past it.
// History across days cannot be produced by waiting, so the rows are written at chosen hours.
// On the embedded store, and on PostgreSQL when TEST_DATABASE_URL is set.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "../../generated/prisma/client.ts";
import { workspaceRepo } from "../../src/features/admin/workspace-repo.ts";
import { historyRepo } from "../../src/features/insight/history-repo.ts";
import { audienceRepo } from "../../src/features/membership/audience-repo.ts";
import type { SizeChange } from "../../src/features/membership/membership-service.ts";
import type { Store } from "../../src/platform/db/database.ts";
import { jsonRows } from "../../src/platform/db/json-rows.ts";
import type { SqlClient } from "../../src/platform/db/sql-client.ts";
import { openTestStore } from "../support/live-server.ts";

const ws = "ws_size_history";
const at = (iso: string) => new Date(iso);

/**
 * The size history's part of a write's closing statement, as a statement of its own at `when`,
 * reading the write's sizes (rec_siz) as the closing statement has them: the audiences' sizes
 * after the write.
 */
const recordSizes = (tx: SqlClient, workspaceId: string, changes: SizeChange[], when: Date) =>
  tx.$executeRaw`
    WITH rec_siz AS (
      SELECT a.id AS audience_id, v.entered::int AS entered, v.exited::int AS exited, a.member_count
      FROM ${jsonRows("v", { id: changes.map((c) => c.audienceId), entered: changes.map((c) => c.entered), exited: changes.map((c) => c.left) })}
      JOIN audiences AS a ON a.workspace_id = ${workspaceId} AND a.id = v.id
    ),
    ${historyRepo.recordSql(workspaceId, Prisma.sql`${when}::timestamptz`)} SELECT 1`;

describe("the size history", () => {
  let store: Store;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ store, close } = await openTestStore());
    await workspaceRepo.create(store.db, { id: ws, name: ws });
  });
  afterAll(() => close());

  /**
   * An audience whose history is these rows (hour, entered, left, size at the end), each added to
   * its hour's and its day's rows as `record` adds a write's changes (rows in time order).
   */
  async function audienceWith(id: string, rows: [string, number, number, number][]) {
    await audienceRepo.create(store.db, { workspaceId: ws, id, name: id });
    for (const [hour, entered, left, size] of rows) {
      await store.db.$executeRaw`
        INSERT INTO audience_history (workspace_id, audience_id, hour, entered, "left", member_count)
        VALUES (${ws}, ${id}, ${at(hour)}, ${entered}, ${left}, ${size})`;
      await store.db.$executeRaw`
        INSERT INTO audience_history_day AS d (workspace_id, audience_id, day, entered, "left", member_count)
        VALUES (${ws}, ${id}, date_trunc('day', ${at(hour)}::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
                ${entered}, ${left}, ${size})
        ON CONFLICT (workspace_id, audience_id, day) DO UPDATE
        SET entered = d.entered + EXCLUDED.entered, "left" = d."left" + EXCLUDED."left", member_count = EXCLUDED.member_count`;
    }
  }
  /** The buckets of an audience that exists (an unknown one has none: undefined). */
  const rangeOf = async (id: string, range: { interval: "hour" | "day"; from: Date; to: Date }) => {
    const rows = await historyRepo.list(store.db, ws, id, range);
    if (rows === undefined) throw new Error(`no audience ${id}`);
    return rows;
  };
  const list = (id: string, interval: "hour" | "day", from: string, to: string) =>
    rangeOf(id, { interval, from: at(from), to: at(to) });

  const ROWS: [string, number, number, number][] = [
    ["2026-03-01T09:00:00.000Z", 10, 0, 10],
    ["2026-03-01T23:00:00.000Z", 5, 2, 13],
    ["2026-03-02T00:00:00.000Z", 1, 4, 10],
    ["2026-03-04T12:00:00.000Z", 0, 3, 7],
  ];

  it("gives hours as written and days as sums with the size at the end of their last hour", async () => {
    await audienceWith("aud_days", ROWS);
    expect(await list("aud_days", "hour", "2026-01-01T00:00:00.000Z", "2026-12-31T00:00:00.000Z")).toEqual(
      ROWS.map(([hour, entered, left, memberCount]) => ({ at: hour, memberCount, entered, left })),
    );
    expect(await list("aud_days", "day", "2026-01-01T00:00:00.000Z", "2026-12-31T00:00:00.000Z")).toEqual([
      { at: "2026-03-01T00:00:00.000Z", memberCount: 13, entered: 15, left: 2 },
      { at: "2026-03-02T00:00:00.000Z", memberCount: 10, entered: 1, left: 4 },
      { at: "2026-03-04T00:00:00.000Z", memberCount: 7, entered: 0, left: 3 },
    ]);
  });

  it("tells an audience without rows in the range from no audience at all", async () => {
    await audienceWith("aud_quiet", []);
    expect(await list("aud_quiet", "day", "2026-01-01T00:00:00.000Z", "2026-12-31T00:00:00.000Z")).toEqual([]);
    expect(await list("aud_quiet", "hour", "2026-01-01T00:00:00.000Z", "2026-12-31T00:00:00.000Z")).toEqual([]);
    const range = {
      interval: "day",
      from: at("2026-01-01T00:00:00.000Z"),
      to: at("2026-12-31T00:00:00.000Z"),
    } as const;
    expect(await historyRepo.list(store.db, ws, "aud_nowhere", range)).toBeUndefined();
    expect(await historyRepo.list(store.db, "ws_other", "aud_quiet", range)).toBeUndefined();
  });

  it("returns the buckets whose start lies in [from, to]", async () => {
    await audienceWith("aud_range", ROWS);
    // 09:30 is after the start of 2026-03-01's day bucket, so that day is not returned whole.
    expect(
      (await list("aud_range", "day", "2026-03-01T09:30:00.000Z", "2026-03-04T00:00:00.000Z")).map((r) => r.at),
    ).toEqual(["2026-03-02T00:00:00.000Z", "2026-03-04T00:00:00.000Z"]);
    expect(
      (await list("aud_range", "hour", "2026-03-01T09:00:00.000Z", "2026-03-02T00:00:00.000Z")).map((r) => r.at),
    ).toEqual(["2026-03-01T09:00:00.000Z", "2026-03-01T23:00:00.000Z", "2026-03-02T00:00:00.000Z"]);
    expect(await list("aud_range", "day", "2026-03-03T00:00:00.000Z", "2026-03-03T23:59:59.999Z")).toEqual([]);
  });

  it("adds a write's changes to the current hour and keeps the audience's size", async () => {
    await audienceWith("aud_record", []);
    await store.transaction(async (tx) => {
      await tx.$executeRaw`UPDATE audiences SET member_count = 4 WHERE workspace_id = ${ws} AND id = 'aud_record'`;
      await recordSizes(tx, ws, [{ audienceId: "aud_record", entered: 5, left: 1 }], new Date());
    });
    await store.transaction(async (tx) => {
      await tx.$executeRaw`UPDATE audiences SET member_count = 3 WHERE workspace_id = ${ws} AND id = 'aud_record'`;
      await recordSizes(tx, ws, [{ audienceId: "aud_record", entered: 0, left: 1 }], new Date());
    });
    const now = Date.now();
    for (const interval of ["day", "hour"] as const) {
      const rows = await rangeOf("aud_record", {
        interval,
        from: new Date(now - 2 * 86_400_000),
        to: new Date(now + 86_400_000),
      });
      // Two rows only when the writes fell either side of midnight (UTC), or of an hour.
      expect({
        entered: rows.reduce((s, r) => s + r.entered, 0),
        left: rows.reduce((s, r) => s + r.left, 0),
        size: rows.at(-1)?.memberCount,
      }).toEqual({ entered: 5, left: 2, size: 3 });
    }
  });

  it("purges rows older than the cutoff, and only those", async () => {
    await audienceWith("aud_purge", ROWS);
    await historyRepo.purgeBefore(store.db, at("2026-03-02T00:00:00.000Z"));
    expect(
      (await list("aud_purge", "hour", "2026-01-01T00:00:00.000Z", "2026-12-31T00:00:00.000Z")).map((r) => r.at),
    ).toEqual(["2026-03-02T00:00:00.000Z", "2026-03-04T12:00:00.000Z"]);
    expect(await list("aud_purge", "day", "2026-01-01T00:00:00.000Z", "2026-12-31T00:00:00.000Z")).toEqual([
      { at: "2026-03-02T00:00:00.000Z", memberCount: 10, entered: 1, left: 4 },
      { at: "2026-03-04T00:00:00.000Z", memberCount: 7, entered: 0, left: 3 },
    ]);
  });

  it("keeps the whole day of the cutoff, its hours before it purged", async () => {
    await audienceWith("aud_purge_day", ROWS);
    await historyRepo.purgeBefore(store.db, at("2026-03-01T12:00:00.000Z"));
    expect(
      (await list("aud_purge_day", "hour", "2026-01-01T00:00:00.000Z", "2026-12-31T00:00:00.000Z")).map((r) => r.at),
    ).toEqual(["2026-03-01T23:00:00.000Z", "2026-03-02T00:00:00.000Z", "2026-03-04T12:00:00.000Z"]);
    expect((await list("aud_purge_day", "day", "2026-03-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z"))[0]).toEqual({
      at: "2026-03-01T00:00:00.000Z",
      memberCount: 13,
      entered: 15,
      left: 2,
    });
  });
});

import { LRUCache } from "lru-cache";
import { Prisma } from "../../../generated/prisma/client.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";

/** How long the size history is kept, whatever the event retention (the contract says 400 days). */
export const HISTORY_DAYS = 400;

export interface HistoryRow {
  /** The bucket's start, as the contract writes a time: "2026-03-01T00:00:00.000Z". */
  at: string;
  memberCount: number;
  entered: number;
  left: number;
}

/**
 * A bucket's start (seconds since the epoch, as the database wrote it) as the contract writes a
 * time. Every audience's buckets start at the same hours and days, and 400 days hold 9,600 hours:
 * written out once each, they are looked up after. Written by the database (to_char), they cost
 * the embedded store a millisecond a request; by a Date each, half a millisecond of the process.
 */
const isoOf = new LRUCache<string, string>({
  max: 20_000,
  memoMethod: (seconds) => new Date(Number(seconds) * 1000).toISOString(),
});

/** The start of the UTC hour or day of a timestamptz expression, whatever the session's time zone. */
const bucketOf = (interval: "hour" | "day", at: Prisma.Sql) =>
  Prisma.sql`(date_trunc(${interval}, ${at} AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')`;

/**
 * audience_history: per audience and UTC hour with a change, how many members entered and left
 * and the size at the end of the hour; audience_history_day: the same per UTC day (the sums of
 * its hours, the size at the end of the last). Written by every write that changes members, in
 * its transaction (membership-service.ts calls `record` through the composition).
 */
export const historyRepo = {
  /**
   * Adds a write's changes to the hour's and day's rows of `at`, for every audience it changed, as
   * common table expressions (named hist_*) of the write's one closing statement (membership's
   * transition-repo.ts `writeRecords`). `at` is the instant the membership record writes the
   * changes at in that statement (the clock at the end of the write, not the transaction's start):
   * the write holds the rows of the audiences it changed until it commits, so for one audience a
   * later write's hour is never earlier, and the latest row's member_count (read here, after the
   * changes) is the current size.
   */
  recordSql(workspaceId: string, at: Prisma.Sql): Prisma.Sql {
    // The write's sizes are its statement's rec_siz (transition-repo.ts WriteRecordParts).
    return Prisma.sql`
      hist_h AS (
        INSERT INTO audience_history AS h (workspace_id, audience_id, hour, entered, "left", member_count)
        SELECT ${workspaceId}, c.audience_id, ${bucketOf("hour", at)}, c.entered, c.exited, c.member_count FROM rec_siz AS c
        ON CONFLICT (workspace_id, audience_id, hour) DO UPDATE
        SET entered = h.entered + EXCLUDED.entered, "left" = h."left" + EXCLUDED."left", member_count = EXCLUDED.member_count
      ),
      hist_d AS (
        INSERT INTO audience_history_day AS h (workspace_id, audience_id, day, entered, "left", member_count)
        SELECT ${workspaceId}, c.audience_id, ${bucketOf("day", at)}, c.entered, c.exited, c.member_count FROM rec_siz AS c
        ON CONFLICT (workspace_id, audience_id, day) DO UPDATE
        SET entered = h.entered + EXCLUDED.entered, "left" = h."left" + EXCLUDED."left", member_count = EXCLUDED.member_count
      )`;
  },

  /**
   * The audience's buckets (hours or days, each a row as written) whose start lies in [from, to],
   * oldest first; undefined when the workspace has no such audience. One statement: the audience's
   * row with its buckets as one text, "start,size,entered,left" per bucket (start in seconds since
   * the epoch), separated by ";": 400 rows converted column by column cost more than reading them,
   * on the embedded store most of all, and a JSON document of them a millisecond more than this.
   */
  async list(
    db: SqlClient,
    workspaceId: string,
    audienceId: string,
    range: { interval: "hour" | "day"; from: Date; to: Date },
  ): Promise<HistoryRow[] | undefined> {
    const [table, at] =
      range.interval === "day"
        ? [Prisma.raw("audience_history_day"), Prisma.raw("day")]
        : [Prisma.raw("audience_history"), Prisma.raw("hour")];
    const [row] = await db.$queryRaw<{ doc: string }[]>`
      SELECT coalesce((
        SELECT string_agg(concat_ws(',', date_part('epoch', h.${at}), h.member_count, h.entered, h."left"), ';' ORDER BY h.${at})
        FROM ${table} AS h
        WHERE h.workspace_id = a.workspace_id AND h.audience_id = a.id
          AND h.${at} >= ${range.from}::timestamptz AND h.${at} <= ${range.to}::timestamptz
      ), '') AS doc
      FROM audiences AS a WHERE a.workspace_id = ${workspaceId} AND a.id = ${audienceId}`;
    if (!row) return undefined;
    if (row.doc === "") return [];
    return row.doc.split(";").map((bucket) => {
      const [seconds, memberCount, entered, left] = bucket.split(",") as [string, string, string, string];
      return {
        at: isoOf.memo(seconds),
        memberCount: Number(memberCount),
        entered: Number(entered),
        left: Number(left),
      };
    });
  },

  /**
   * Deletes the hours older than the cutoff, and the days that ended by then, across workspaces
   * (a periodic purge): the day of the cutoff keeps its whole row.
   */
  async purgeBefore(db: SqlClient, cutoff: Date): Promise<number> {
    const hours = await db.$executeRaw`DELETE FROM audience_history WHERE hour < ${cutoff}`;
    const days =
      await db.$executeRaw`DELETE FROM audience_history_day WHERE day <= ${cutoff}::timestamptz - interval '1 day'`;
    return hours + days;
  },
};

export type HistoryRepo = typeof historyRepo;

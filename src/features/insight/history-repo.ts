import { Prisma } from "../../../generated/prisma/client.ts";
import type { Tx } from "../../platform/db/database.ts";
import { jsonRows } from "../../platform/db/json-rows.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";
import type { SizeChange } from "../membership/membership-service.ts";

/** How long the size history is kept, whatever the event retention (the contract says 400 days). */
export const HISTORY_DAYS = 400;

export interface HistoryRow {
  /** The bucket's start. */
  at: Date;
  memberCount: number;
  entered: number;
  left: number;
}

/** The start of the UTC hour or day of a timestamptz expression, whatever the session's time zone. */
const bucketOf = (interval: "hour" | "day", at: Prisma.Sql) =>
  Prisma.sql`(date_trunc(${interval}, ${at} AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')`;

/**
 * audience_history: per audience and UTC hour with a change, how many members entered and left
 * and the size at the end of the hour. Written by every write that changes members, in its
 * transaction (membership-service.ts calls `record` through the composition).
 */
export const historyRepo = {
  /**
   * Adds a write's changes to the current hour's rows, one statement for every audience it changed.
   * The hour is the statement's clock, not the transaction's start: the write holds the rows of
   * the audiences it changed until it commits, so for one audience a later write's hour is never
   * earlier, and the latest row's member_count (read here, after the changes) is the current size.
   */
  async record(tx: Tx, workspaceId: string, changes: SizeChange[]): Promise<void> {
    const columns = {
      audience_id: changes.map((c) => c.audienceId),
      entered: changes.map((c) => c.entered),
      exited: changes.map((c) => c.left),
    };
    await tx.$executeRaw`
      INSERT INTO audience_history AS h (workspace_id, audience_id, hour, entered, "left", member_count)
      SELECT a.workspace_id, a.id, ${bucketOf("hour", Prisma.sql`clock_timestamp()`)}, v.entered::int, v.exited::int, a.member_count
      FROM ${jsonRows("v", columns)}
      JOIN audiences AS a ON a.workspace_id = ${workspaceId} AND a.id = v.audience_id
      ON CONFLICT (workspace_id, audience_id, hour) DO UPDATE
      SET entered = h.entered + EXCLUDED.entered, "left" = h."left" + EXCLUDED."left", member_count = EXCLUDED.member_count`;
  },

  /**
   * The audience's buckets whose start lies in [from, to], oldest first. A day is the sum of its
   * hours, with the size at the end of its last hour with a change.
   */
  list(
    db: SqlClient,
    workspaceId: string,
    audienceId: string,
    range: { interval: "hour" | "day"; from: Date; to: Date },
  ): Promise<HistoryRow[]> {
    const bucket = bucketOf(range.interval, Prisma.sql`h.hour`);
    return db.$queryRaw<HistoryRow[]>`
      SELECT b.at, b."memberCount", b.entered, b."left" FROM (
        SELECT ${bucket} AS at, (array_agg(h.member_count ORDER BY h.hour DESC))[1] AS "memberCount",
               sum(h.entered)::int AS entered, sum(h."left")::int AS "left"
        FROM audience_history AS h
        WHERE h.workspace_id = ${workspaceId} AND h.audience_id = ${audienceId}
          AND h.hour >= ${bucketOf(range.interval, Prisma.sql`${range.from}::timestamptz`)}
          AND h.hour <= ${range.to}::timestamptz + interval '1 day'
        GROUP BY 1
      ) AS b
      WHERE b.at >= ${range.from}::timestamptz AND b.at <= ${range.to}::timestamptz
      ORDER BY b.at`;
  },

  /** Deletes rows older than the cutoff, across workspaces (a periodic purge). */
  purgeBefore(db: SqlClient, cutoff: Date): Promise<number> {
    return db.$executeRaw`DELETE FROM audience_history WHERE hour < ${cutoff}`;
  },
};

export type HistoryRepo = typeof historyRepo;

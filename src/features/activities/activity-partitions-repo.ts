import { Prisma } from "../../../generated/prisma/client.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";

/** A month partition of activities: [from, to), named after its month. */
export interface Month {
  name: string;
  from: Date;
  to: Date;
}

const NAME = /^activities_y(\d{4})m(\d{2})$/;

/** The month partition holding this instant (UTC months). */
export function monthOf(at: Date): Month {
  const year = at.getUTCFullYear();
  const month = at.getUTCMonth();
  return {
    name: `activities_y${year}m${String(month + 1).padStart(2, "0")}`,
    from: new Date(Date.UTC(year, month, 1)),
    to: new Date(Date.UTC(year, month + 1, 1)),
  };
}

// The bounds and names below are written into DDL, which takes no parameters: they are made here
// from Dates (monthOf), never from a request.
const bound = (at: Date) => Prisma.raw(`'${at.toISOString()}'`);
const table = (month: Month) => Prisma.raw(`"${month.name}"`);

/**
 * The partitions of activities and what goes with them: creating months ahead (rows that arrived
 * before their month existed move out of the default partition), and purging what the retention
 * no longer keeps, with activity_types' counts taken down and activity_ids' rows deleted in the
 * same transaction.
 */
export const activityPartitionRepo = {
  /**
   * Whether this transaction may maintain the partitions: one process at a time (the others skip
   * the run); released when the transaction ends.
   */
  async claim(tx: SqlClient): Promise<boolean> {
    const [row] = await tx.$queryRaw<{ claimed: boolean }[]>`
      SELECT pg_try_advisory_xact_lock(hashtext('activity partitions')) AS claimed`;
    return row?.claimed === true;
  },

  /** The month partitions that exist. */
  async months(tx: SqlClient): Promise<Month[]> {
    const rows = await tx.$queryRaw<{ name: string }[]>`
      SELECT c.relname AS name FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'activities'::regclass`;
    return rows.flatMap(({ name }) => {
      const match = NAME.exec(name);
      return match ? [monthOf(new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, 1)))] : [];
    });
  },

  /** The months of the rows the default partition holds (stored while their month did not exist). */
  async monthsInDefault(tx: SqlClient): Promise<Month[]> {
    const rows = await tx.$queryRaw<{ at: Date }[]>`
      SELECT DISTINCT date_trunc('month', occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS at FROM activities_default`;
    return rows.map((row) => monthOf(row.at));
  },

  /**
   * Creates a month's partition. Built beside the table and attached, so that rows the default
   * partition holds for that month (stored while it did not exist) can move into it first.
   */
  async create(tx: SqlClient, month: Month): Promise<void> {
    await tx.$executeRaw`LOCK TABLE activities IN SHARE ROW EXCLUSIVE MODE`;
    await tx.$executeRaw`CREATE TABLE ${table(month)} (LIKE activities INCLUDING DEFAULTS)`;
    await tx.$executeRaw`
      WITH moved AS (
        DELETE FROM activities_default WHERE occurred_at >= ${month.from} AND occurred_at < ${month.to}
        RETURNING *
      )
      INSERT INTO ${table(month)} SELECT * FROM moved`;
    await tx.$executeRaw`
      ALTER TABLE activities ATTACH PARTITION ${table(month)} FOR VALUES FROM (${bound(month.from)}) TO (${bound(month.to)})`;
  },

  /**
   * Drops a month wholly older than the retention, its client ids deleted and its rows taken off
   * their types' counts first. Locks in the order an ingest takes them (the store statement claims
   * client ids, then updates activity_types, then inserts into activities; a member's delete goes
   * the same way): activities' table lock first, which waits for any ingest under way and keeps
   * new ones out, then activity_ids, then activity_types.
   */
  async drop(tx: SqlClient, month: Month): Promise<void> {
    await tx.$executeRaw`LOCK TABLE activities IN ACCESS EXCLUSIVE MODE`;
    // The month's client ids, found by their time (activity_ids holds each activity's).
    await tx.$executeRaw`DELETE FROM activity_ids WHERE occurred_at >= ${month.from} AND occurred_at < ${month.to}`;
    await tx.$executeRaw`
      UPDATE activity_types AS t SET count = t.count - g.n
      FROM (SELECT workspace_id, type_id, count(*) AS n FROM ${table(month)} GROUP BY workspace_id, type_id) AS g
      WHERE t.workspace_id = g.workspace_id AND t.type_id = g.type_id`;
    await tx.$executeRaw`DROP TABLE ${table(month)}`;
  },

  /**
   * Deletes the activities older than the cutoff that no dropped month took (those of the month
   * the cutoff falls in, and any in the default partition), taking them off their types' counts,
   * with the client ids of every activity older than the cutoff: the ids first, in a statement of
   * their own, so that rows are locked in the ingest's order (activity_ids, then activity_types)
   * rather than in whatever order one statement's WITH items happen to run.
   */
  async deleteBefore(tx: SqlClient, cutoff: Date): Promise<number> {
    await tx.$executeRaw`DELETE FROM activity_ids WHERE occurred_at < ${cutoff}`;
    const [row] = await tx.$queryRaw<{ removed: number }[]>`
      WITH gone AS (
        DELETE FROM activities WHERE occurred_at < ${cutoff} RETURNING workspace_id, type_id
      ),
      counted AS (
        UPDATE activity_types AS t SET count = t.count - g.n
        FROM (SELECT workspace_id, type_id, count(*) AS n FROM gone GROUP BY workspace_id, type_id) AS g
        WHERE t.workspace_id = g.workspace_id AND t.type_id = g.type_id
      )
      SELECT count(*)::int AS removed FROM gone`;
    return row?.removed ?? 0;
  },
};

export type ActivityPartitionRepo = typeof activityPartitionRepo;

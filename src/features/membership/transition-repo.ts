import { Prisma } from "../../../generated/prisma/client.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";
import { membersOf } from "./member-set.ts";
import type { OutboxEntry } from "./outbox-entries.ts";

/** The member numbers of one audience that moved one way for one reason in a write. */
interface Group {
  a: string;
  e: boolean;
  r: string;
  s: number[];
}

/**
 * The member numbers of one audience at instant `before` (exclusive: a millisecond after the
 * instant asked for), optionally within a range of numbers: for each member number, its last
 * transition before it, kept if it entered. Read by the history's pages and by exports.
 */
export const membersAtSql = (
  workspaceId: string,
  audienceId: string,
  before: Date,
  range?: { from: number; to: number },
) => Prisma.sql`
  SELECT s.seq FROM (
    SELECT DISTINCT ON (t.seq) t.seq, t.entered
    FROM membership_transitions AS t
    WHERE t.workspace_id = ${workspaceId} AND t.audience_id = ${audienceId} AND t.at < ${before}::timestamptz
      ${range === undefined ? Prisma.empty : Prisma.sql`AND t.seq >= ${range.from}::int AND t.seq < ${range.to}::int`}
    ORDER BY t.seq, t.at DESC
  ) AS s WHERE s.entered`;

/**
 * The membership record (membership_transitions): every entry into and exit from an audience, one
 * row per member and write. Written by membership-service.ts once per write, in its transaction,
 * from the same netted events as the feed and the size history, so the three cannot disagree.
 * Read by src/features/history/.
 */
export const transitionRepo = {
  /**
   * Records a write's netted audience.members_changed entries in one statement and returns the
   * instant it recorded them at (the statement's clock, kept to the microsecond so that two writes
   * never share one; returned to the millisecond, as the contract writes a time and the size
   * history buckets it), or undefined when the write moved nobody. The members travel as their numbers,
   * grouped by audience, way and reason: a million moved by a rule are one list, not a million
   * repeated audience ids. A write holds the rows of the audiences it changed until it commits, so
   * for one audience a later write's instant is never earlier (were two equal, the later's row
   * stands: a member's state after both is the later's).
   */
  async record(tx: SqlClient, workspaceId: string, entries: OutboxEntry[]): Promise<Date | undefined> {
    const groups: Group[] = [];
    for (const entry of entries) {
      if (entry.type !== "audience.members_changed") continue;
      const entered = membersOf(entry.entered);
      const left = membersOf(entry.left);
      if (entered.length > 0) groups.push({ a: entry.audienceId, e: true, r: entry.reason, s: entered });
      if (left.length > 0) groups.push({ a: entry.audienceId, e: false, r: entry.reason, s: left });
    }
    if (groups.length === 0) return undefined;
    const [row] = await tx.$queryRaw<{ at: Date }[]>`
      WITH t AS MATERIALIZED (SELECT clock_timestamp() AS at),
      ins AS (
        INSERT INTO membership_transitions AS x (workspace_id, audience_id, seq, at, entered, reason)
        SELECT ${workspaceId}, g.a, s.seq::int, t.at, g.e, g.r
        FROM json_to_recordset(${JSON.stringify(groups)}::json) AS g(a text, e boolean, r text, s json)
        CROSS JOIN LATERAL json_array_elements_text(g.s) AS s(seq)
        CROSS JOIN t
        ON CONFLICT (workspace_id, audience_id, seq, at) DO UPDATE SET entered = EXCLUDED.entered, reason = EXCLUDED.reason
      )
      SELECT date_trunc('milliseconds', at) AS at FROM t`;
    return row?.at;
  },
};

export type TransitionRepo = typeof transitionRepo;

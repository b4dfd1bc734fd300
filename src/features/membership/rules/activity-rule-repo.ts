import { Prisma } from "../../../../generated/prisma/client.ts";
import { jsonRows } from "../../../platform/db/json-rows.ts";
import type { SqlClient } from "../../../platform/db/sql-client.ts";
import { type ActivityCondition, type ActivityTally, activityWindow } from "./activity-condition.ts";
import { type ActivityContext, countedSql, joinedType } from "./activity-sql.ts";
import type { Filter } from "./filter.ts";
import { AUDIENCE_CONDITIONS } from "./filter-sql.ts";

/** The activity conditions anywhere in a stored rule (a jsonpath over its document). */
const ACTIVITY_CONDITIONS = Prisma.sql`'lax $.** ? (exists(@.activity))'`;

/** The rules activityRules reads, and whether each counts activities and names audiences. */
const followingRules = (workspaceId: string) => Prisma.sql`
  FROM audiences
  WHERE workspace_id = ${workspaceId} AND filter IS NOT NULL
    AND (jsonb_path_exists(filter, ${ACTIVITY_CONDITIONS}) OR jsonb_path_exists(filter, ${AUDIENCE_CONDITIONS}))`;
const counts = Prisma.sql`jsonb_path_exists(filter, ${ACTIVITY_CONDITIONS})`;
const names = Prisma.sql`jsonb_path_exists(filter, ${AUDIENCE_CONDITIONS})`;

/**
 * activityRuleRepo.activityRules' rows as one JSON text value (a scalar subquery), for the
 * statement of the member lock that an ingest reads them with (membership-writer.ts
 * readActivityRules); JSON.parse reads it back.
 */
export const activityRulesJson = (workspaceId: string) => Prisma.sql`(
  SELECT coalesce(json_agg(json_build_object('id', id, 'filter', filter, 'counts', ${counts}, 'names', ${names}) ORDER BY id), '[]')::text
  ${followingRules(workspaceId)})`;

/** A rule that counts activities, names other audiences, or both. */
export interface FollowingRule {
  id: string;
  filter: Filter;
  counts: boolean;
  names: boolean;
}

/** What rules over activities read of them: tallies per member, and who crossed a window's edge. */
export const activityRuleRepo = {
  /**
   * What following an ingest reads of the workspace's rules, in one statement: the audiences whose
   * rules hold activity conditions (`counts`) and those whose rules name other audiences (`names`:
   * the audiences that follow them, as ruleRepo.namingAudiences reads them), in id order.
   */
  activityRules(db: SqlClient, workspaceId: string): Promise<FollowingRule[]> {
    return db.$queryRaw`SELECT id, filter, ${counts} AS counts, ${names} AS names ${followingRules(workspaceId)} ORDER BY id`;
  },

  /**
   * For each of these members with activities of the conditions' types, what each condition counts
   * (in the order given) and when the latest counted activity occurred: one pass over the
   * members' activities by key. A member absent from the answer counts 0 for every condition.
   */
  async tallies(
    db: SqlClient,
    workspaceId: string,
    seqs: number[],
    conditions: ActivityCondition[],
    context: ActivityContext,
  ): Promise<Map<number, ActivityTally[]>> {
    if (seqs.length === 0 || conditions.length === 0) return new Map();
    const tests = conditions.map((c) => countedSql(c, context, joinedType(c)));
    const counts = tests.map((test) => Prisma.sql`count(*) FILTER (WHERE ${test})`);
    const lasts = tests.map((test) => Prisma.sql`extract(epoch FROM max(a.occurred_at) FILTER (WHERE ${test})) * 1000`);
    // No condition counts what occurred before the earliest window's start: said in the WHERE
    // clause, it spares the month partitions older than it (each one more index probe per member).
    const starts = conditions.map((c) => activityWindow(c, context.now, context.activityRetentionDays).from);
    const earliest = starts.includes(null) ? null : Math.min(...(starts as number[]));
    const since =
      earliest === null
        ? Prisma.empty
        : Prisma.sql`AND a.occurred_at >= ${new Date(earliest).toISOString()}::timestamptz`;
    const rows = await db.$queryRaw<{ seq: number; counts: number[]; lasts: (number | null)[] }[]>`
      SELECT a.member_seq AS seq, ARRAY[${Prisma.join(counts)}]::int[] AS counts,
             ARRAY[${Prisma.join(lasts)}]::float8[] AS lasts
      FROM activities AS a JOIN activity_types AS t ON t.workspace_id = a.workspace_id AND t.type_id = a.type_id
      WHERE a.workspace_id = ${workspaceId} AND a.member_seq = ANY(${seqs}::int[]) ${since}
        AND t.type = ANY(${[...new Set(conditions.map((c) => c.activity))]}::text[])
      GROUP BY a.member_seq`;
    return new Map(
      rows.map((row) => [
        row.seq,
        row.counts.map((count, i) => ({
          count,
          lastAt: row.lasts[i] === null ? null : Math.round(Number(row.lasts[i])),
        })),
      ]),
    );
  },

  /**
   * The members with an activity of a type that occurred in [from, to), per audience: those whose
   * activity crossed one of the audience's window edges (or the retention's) since its last tick.
   * Each span is one range of the index by workspace, type and time.
   */
  async crossings(
    tx: SqlClient,
    workspaceId: string,
    spans: { audienceId: string; type: string; from: Date; to: Date }[],
  ): Promise<Map<string, number[]>> {
    if (spans.length === 0) return new Map();
    const rows = await tx.$queryRaw<{ audienceId: string; seqs: number[] }[]>`
      SELECT r.audience_id AS "audienceId", array_agg(DISTINCT x.member_seq) AS seqs
      FROM ${jsonRows("r", {
        audience_id: spans.map((span) => span.audienceId),
        type: spans.map((span) => span.type),
        from_at: spans.map((span) => span.from.toISOString()),
        to_at: spans.map((span) => span.to.toISOString()),
      })}
      CROSS JOIN LATERAL (
        SELECT a.member_seq FROM activities AS a
        WHERE a.workspace_id = ${workspaceId}
          AND a.type_id = (SELECT t.type_id FROM activity_types AS t WHERE t.workspace_id = ${workspaceId} AND t.type = r.type)
          AND a.occurred_at >= r.from_at::timestamptz AND a.occurred_at < r.to_at::timestamptz
      ) AS x
      GROUP BY r.audience_id`;
    return new Map(rows.map((row) => [row.audienceId, row.seqs]));
  },
};

export type ActivityRuleRepo = typeof activityRuleRepo;

import { Prisma } from "../../../../generated/prisma/client.ts";
import type { FieldType, FieldTypes } from "../../../domain/field-types.ts";
import { jsonRows } from "../../../platform/db/json-rows.ts";
import type { SqlClient } from "../../../platform/db/sql-client.ts";
import { bitOf, chunkOf, kind, storedHas } from "../member-bits-sql.ts";
import { byIds, type FoldedMemberRow, type NumberedMemberRow } from "../member-repo.ts";
import { joinChunk, readsByKey, seqsOf } from "../membership-sql.ts";
import type { Filter } from "./filter.ts";
import { AUDIENCE_CONDITIONS, filterSql, type SqlContext } from "./filter-sql.ts";

/** A rule-based audience, and which of the members asked about its match set holds. */
export interface RuleMatches {
  id: string;
  filter: Filter;
  matched: number[];
}

/** Which of the members asked about an audience that rules name holds, by hand and as members. */
export interface HeldBy {
  include: number[];
  exclude: number[];
  member: number[];
}

/**
 * Everything a member write evaluates rules with, read in one statement (ruleRepo.ruleMatches):
 * the rule audiences with what their match sets hold of the members, what the named audiences
 * hold of them, the declared field types, and the members themselves as asked.
 */
export interface RuleRead {
  types: FieldTypes;
  rules: RuleMatches[];
  held: Map<string, HeldBy>;
  /** The members of `rowsOf`, as writers read them (their data, with their numbers). */
  rows: NumberedMemberRow[];
  /** The members of `foldedOf`, as rules see them. */
  folded: FoldedMemberRow[];
}

/** A member's row as JSON (ruleMatches' `rows`, an upsert's candidates): the columns of a NumberedMemberRow. */
export const memberJson = Prisma.sql`json_build_object('id', m.id, 'createdAt', m.created_at, 'email', m.email,
  'fields', m.fields, 'alternativeEmails', m.alternative_emails, 'seq', m.seq)`;

/**
 * ruleRepo.namingAudiences' rows as one JSON text value (a scalar subquery), for a statement that
 * reads them beside other things: the lock of an audience whose members are changed by hand reads
 * the rules that follow it (membership-writer.ts `writable`). namingOf reads it back.
 */
export const namingAudiencesJson = (workspaceId: string) => Prisma.sql`(
  SELECT coalesce(json_agg(json_build_object('id', id, 'filter', filter, 'isArchived', is_archived) ORDER BY id), '[]')::text
  FROM audiences
  WHERE workspace_id = ${workspaceId} AND filter IS NOT NULL AND jsonb_path_exists(filter, ${AUDIENCE_CONDITIONS}))`;

export const namingOf = (json: string): { id: string; filter: Filter; isArchived: boolean }[] => JSON.parse(json);

/**
 * ruleRepo.ruleMatches' read as one JSON text value (a scalar subquery), for the statement that
 * takes the member lock to read it too (membership-writer.ts readMembers, readCandidates);
 * ruleReadOf reads it back. `seqsFrom`: the members as a query of their numbers, not by id.
 */
export const ruleMatchesJson = (
  workspaceId: string,
  memberIds: string[],
  members: { rowsOf?: string[]; foldedOf?: string[]; seqsFrom?: Prisma.Sql } = {},
): Prisma.Sql => {
  const seq = Prisma.sql`n.seq`;
  // A few members (their count bounds their chunks'): each rule audience's chunk of each, by
  // key. More: one join, grouped (a subquery per rule audience would run the join once for each).
  const hits = readsByKey(memberIds.length)
    ? Prisma.sql`
        SELECT r.id AS audience_id, array_agg(n.seq) AS matched
        FROM rules AS r CROSS JOIN n
        ${joinChunk("t", workspaceId, "match", { audience: Prisma.sql`r.id`, chunk: chunkOf(seq) }, true)}
        WHERE ${storedHas("t", bitOf(seq))}
        GROUP BY r.id`
    : Prisma.sql`
        SELECT t.audience_id, array_agg(n.seq) AS matched
        FROM n JOIN membership_chunks AS t ON t.workspace_id = ${workspaceId} AND t.kind = ${kind("match")}
          AND t.audience_id IN (SELECT id FROM rules) AND t.chunk = ${chunkOf(seq)}
        WHERE ${storedHas("t", bitOf(seq))}
        GROUP BY t.audience_id`;
  // One JSON document: a hundred rules' rows converted column by column cost more than the query.
  const { rowsOf = [], foldedOf = [] } = members;
  const rowsSql =
    rowsOf.length === 0
      ? Prisma.sql`NULL`
      : Prisma.sql`(SELECT json_agg(${memberJson}) FROM ${byIds(workspaceId, rowsOf)})`;
  const foldedSql =
    foldedOf.length === 0
      ? Prisma.sql`NULL`
      : Prisma.sql`(SELECT json_agg(json_build_object('id', m.id, 'seq', m.seq, 'createdAt', m.created_at, 'folded', m.folded))
            FROM ${byIds(workspaceId, foldedOf)})`;
  return Prisma.sql`(
      WITH n AS MATERIALIZED (${members.seqsFrom ?? seqsOf(workspaceId, memberIds)}),
      rules AS MATERIALIZED (
        SELECT id, filter FROM audiences WHERE workspace_id = ${workspaceId} AND filter IS NOT NULL
      ),
      hits AS (${hits}),
      named AS MATERIALIZED (
        SELECT DISTINCT jsonb_path_query(filter, 'lax $.** ? (@.field == "audience").value') #>> '{}' AS id FROM rules
      ),
      held AS (
        SELECT t.audience_id, t.kind, array_agg(n.seq) AS seqs
        FROM named JOIN n ON true
        JOIN membership_chunks AS t ON t.workspace_id = ${workspaceId} AND t.audience_id = named.id
          AND t.kind IN (${kind("include")}, ${kind("exclude")}, ${kind("member")}) AND t.chunk = ${chunkOf(seq)}
        WHERE ${storedHas("t", bitOf(seq))}
        GROUP BY t.audience_id, t.kind
      )
      SELECT json_build_object(
        'rules', json_agg(json_build_array(r.id, r.filter, coalesce(h.matched, '{}')) ORDER BY r.id),
        'types', (SELECT json_object_agg(key, type) FROM field_types WHERE workspace_id = ${workspaceId}),
        'held', (SELECT json_agg(json_build_array(audience_id, kind, seqs)) FROM held),
        'rows', ${rowsSql}, 'folded', ${foldedSql})::text
      FROM rules AS r LEFT JOIN hits AS h ON h.audience_id = r.id)`;
};

/** ruleMatchesJson's answer as the read it is. */
export function ruleReadOf(json: string): RuleRead {
  const read = JSON.parse(json) as {
    rules?: [string, Filter, number[]][] | null;
    types?: Record<string, FieldType> | null;
    held?: [string, keyof HeldBy, number[]][] | null;
    rows?: NumberedMemberRow[] | null;
    folded?: FoldedMemberRow[] | null;
  };
  const held = new Map<string, HeldBy>();
  for (const [audienceId, setKind, seqs] of read.held ?? []) {
    const sets = held.get(audienceId) ?? { include: [], exclude: [], member: [] };
    sets[setKind] = seqs;
    held.set(audienceId, sets);
  }
  const withDate = <M extends { createdAt: Date | string }>(m: M): M => ({ ...m, createdAt: new Date(m.createdAt) });
  return {
    types: new Map(Object.entries(read.types ?? {})),
    rules: (read.rules ?? []).map(([id, filter, matched]) => ({ id, filter, matched })),
    held,
    rows: (read.rows ?? []).map(withDate),
    folded: (read.folded ?? []).map(withDate),
  };
}

/** What the membership module reads of rules: to follow member changes, and audience conditions. */
export const ruleRepo = {
  /**
   * The rule-based audiences of the workspace with their rules (archived ones too: they keep
   * following their rule, so they are current when restored), in id order, and the numbers of
   * these members that each one's match set holds; the workspace's declared field types; and for
   * every audience that a rule names, which of these members it holds; and the members of `rowsOf`
   * (their data) and of `foldedOf` (as rules see them), so that a member write reads all it
   * evaluates in one round trip. One statement, without row locks (rules, match sets, members and
   * the members' audiences change only under the workspace's member lock, which the caller holds).
   */
  async ruleMatches(
    tx: SqlClient,
    workspaceId: string,
    memberIds: string[],
    members: { rowsOf?: string[]; foldedOf?: string[] } = {},
  ): Promise<RuleRead> {
    const [row] = await tx.$queryRaw<
      { read: string }[]
    >`SELECT ${ruleMatchesJson(workspaceId, memberIds, members)} AS read`;
    return ruleReadOf(row?.read ?? "{}");
  },

  /** The numbers among `seqs` of the members the rule matches now (evaluated by the database). */
  async matchesAmong(tx: SqlClient, workspaceId: string, filter: Filter, context: SqlContext, seqs: number[]) {
    if (seqs.length === 0) return [];
    const rows = await tx.$queryRaw<{ seq: number }[]>`
      SELECT m.seq FROM members AS m
      WHERE m.workspace_id = ${workspaceId} AND m.seq = ANY(${seqs}::int[])
        AND ${filterSql(filter, { ...context, fewMembers: true })}`;
    return rows.map((r) => r.seq);
  },

  /**
   * For several rules at once, the numbers among each one's own members (`among`) that it
   * matches now: one statement, a branch per rule, instead of a round trip each.
   */
  async matchesAmongMany(
    tx: SqlClient,
    workspaceId: string,
    rules: { audienceId: string; filter: Filter; among: number[] }[],
    context: SqlContext,
  ): Promise<{ audienceId: string; among: number[]; seqs: number[] }[]> {
    const asked = rules.filter((rule) => rule.among.length > 0);
    if (asked.length === 0) return rules.map((rule) => ({ ...rule, seqs: [] }));
    const branches = asked.map(
      (rule, i) => Prisma.sql`SELECT ${i}::int AS i, m.seq FROM members AS m
        WHERE m.workspace_id = ${workspaceId} AND m.seq = ANY(${rule.among}::int[])
          AND ${filterSql(rule.filter, { ...context, fewMembers: true })}`,
    );
    const rows = await tx.$queryRaw<{ i: number; seq: number }[]>`${Prisma.join(branches, " UNION ALL ")}`;
    const found = asked.map(() => [] as number[]);
    for (const row of rows) found[row.i]?.push(row.seq);
    return rules.map((rule) => ({
      audienceId: rule.audienceId,
      among: rule.among,
      seqs: found[asked.indexOf(rule)] ?? [],
    }));
  },

  /** The audiences that follow the clock, with their rules and when they were last brought up to date. */
  timeRules(tx: SqlClient, workspaceId: string): Promise<{ id: string; filter: Filter; evaluatedAt: Date }[]> {
    return tx.$queryRaw`
      SELECT id, filter, evaluated_at AS "evaluatedAt" FROM audiences
      WHERE workspace_id = ${workspaceId} AND evaluated_at IS NOT NULL ORDER BY id`;
  },

  /** The workspaces with an audience whose relative-time conditions were brought up to date before `before`. */
  async dueForClock(db: SqlClient, before: Date): Promise<string[]> {
    const rows = await db.$queryRaw<{ workspaceId: string }[]>`
      SELECT DISTINCT workspace_id AS "workspaceId" FROM audiences
      WHERE evaluated_at IS NOT NULL AND evaluated_at < ${before}`;
    return rows.map((row) => row.workspaceId);
  },

  /**
   * The members whose value of a field lies in a range (inclusive), per audience: `key` "" for
   * createdAt (the members' own index), a date field's key otherwise (member_dates's index), so
   * that only the members near a window's edge are read.
   */
  async inRanges(
    tx: SqlClient,
    workspaceId: string,
    ranges: { audienceId: string; key: string; from: Date; to: Date }[],
  ): Promise<Map<string, number[]>> {
    if (ranges.length === 0) return new Map();
    const rows = await tx.$queryRaw<{ audienceId: string; seqs: number[] }[]>`
      SELECT r.audience_id AS "audienceId", array_agg(DISTINCT x.seq) AS seqs
      FROM ${jsonRows("r", {
        audience_id: ranges.map((range) => range.audienceId),
        key: ranges.map((range) => range.key),
        from_at: ranges.map((range) => range.from.toISOString()),
        to_at: ranges.map((range) => range.to.toISOString()),
      })}
      CROSS JOIN LATERAL (
        SELECT m.seq FROM members AS m
        WHERE r.key = '' AND m.workspace_id = ${workspaceId}
          AND m.created_at BETWEEN r.from_at::timestamptz AND r.to_at::timestamptz
        UNION ALL
        SELECT d.seq FROM member_dates AS d
        WHERE r.key <> '' AND d.workspace_id = ${workspaceId} AND d.key = r.key
          AND d.at BETWEEN r.from_at::timestamptz AND r.to_at::timestamptz
      ) AS x
      GROUP BY r.audience_id`;
    return new Map(rows.map((row) => [row.audienceId, row.seqs]));
  },

  /** Records that these audiences' relative-time conditions are up to date at `at`. */
  async evaluated(tx: SqlClient, workspaceId: string, ids: string[], at: Date): Promise<void> {
    await tx.$executeRaw`
      UPDATE audiences SET evaluated_at = ${at} WHERE workspace_id = ${workspaceId} AND id = ANY(${ids}::text[])`;
  },

  /**
   * The audiences whose rules name other audiences, with their rules, in id order: the edges of
   * the graph of audience conditions (audience-graph.ts), without reading every other rule.
   */
  namingAudiences(db: SqlClient, workspaceId: string): Promise<{ id: string; filter: Filter; isArchived: boolean }[]> {
    // (namingAudiencesJson reads the same rows as one JSON value, for a statement that reads them beside others.)
    return db.$queryRaw`
      SELECT id, filter, is_archived AS "isArchived" FROM audiences
      WHERE workspace_id = ${workspaceId} AND filter IS NOT NULL
        AND jsonb_path_exists(filter, ${AUDIENCE_CONDITIONS})
      ORDER BY id`;
  },

  /** Every audience of the workspace that has a rule, with it, in id order. */
  rules(
    db: SqlClient,
    workspaceId: string,
  ): Promise<{ id: string; name: string; filter: Filter; isArchived: boolean }[]> {
    return db.$queryRaw`
      SELECT id, name, filter, is_archived AS "isArchived" FROM audiences
      WHERE workspace_id = ${workspaceId} AND filter IS NOT NULL ORDER BY id`;
  },
};

export type RuleRepo = typeof ruleRepo;

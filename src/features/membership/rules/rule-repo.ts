import { Prisma } from "../../../../generated/prisma/client.ts";
import type { FieldType, FieldTypes } from "../../../domain/field-types.ts";
import type { Tx } from "../../../platform/db/database.ts";
import type { SqlClient } from "../../../platform/db/sql-client.ts";
import { bitOf, chunkOf, kind } from "../member-bits-sql.ts";
import { joinChunk, readsByKey, seqsOf } from "../membership-sql.ts";
import type { Filter } from "./filter.ts";
import { filterSql, type SqlContext } from "./filter-sql.ts";

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

/** What the membership module reads of rules: to follow member changes, and audience conditions. */
export const ruleRepo = {
  /**
   * The rule-based audiences of the workspace with their rules (archived ones too: they keep
   * following their rule, so they are current when restored), in id order, and the numbers of
   * these members that each one's match set holds; the workspace's declared field types; and for
   * every audience that a rule names, which of these members it holds. One statement, without row
   * locks (rules, match sets and the members' audiences change only under the workspace's member
   * lock, which the caller holds).
   */
  async ruleMatches(
    tx: Tx,
    workspaceId: string,
    memberIds: string[],
  ): Promise<{ types: FieldTypes; rules: RuleMatches[]; held: Map<string, HeldBy> }> {
    const seq = Prisma.sql`n.seq`;
    // A few members (their count bounds their chunks'): each rule audience's chunk of each, by
    // key. More: one join, grouped (a subquery per rule audience would run the join once for each).
    const hits = readsByKey(memberIds.length)
      ? Prisma.sql`
        SELECT r.id AS audience_id, array_agg(n.seq) AS matched
        FROM rules AS r CROSS JOIN n
        ${joinChunk("t", workspaceId, "match", { audience: Prisma.sql`r.id`, chunk: chunkOf(seq) }, true)}
        WHERE get_bit(t.bits, ${bitOf(seq)}) = 1
        GROUP BY r.id`
      : Prisma.sql`
        SELECT t.audience_id, array_agg(n.seq) AS matched
        FROM n JOIN membership_chunks AS t ON t.workspace_id = ${workspaceId} AND t.kind = ${kind("match")}
          AND t.audience_id IN (SELECT id FROM rules) AND t.chunk = ${chunkOf(seq)}
        WHERE get_bit(t.bits, ${bitOf(seq)}) = 1
        GROUP BY t.audience_id`;
    // One JSON document: a hundred rules' rows converted column by column cost more than the query.
    const [row] = await tx.$queryRaw<{ rules: string | null; types: string | null; held: string | null }[]>`
      WITH n AS MATERIALIZED (${seqsOf(workspaceId, memberIds)}),
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
        WHERE get_bit(t.bits, ${bitOf(seq)}) = 1
        GROUP BY t.audience_id, t.kind
      )
      SELECT json_agg(json_build_array(r.id, r.filter, coalesce(h.matched, '{}')) ORDER BY r.id)::text AS rules,
             (SELECT json_object_agg(key, type) FROM field_types WHERE workspace_id = ${workspaceId})::text AS types,
             (SELECT json_agg(json_build_array(audience_id, kind, seqs)) FROM held)::text AS held
      FROM rules AS r LEFT JOIN hits AS h ON h.audience_id = r.id`;
    const rules = JSON.parse(row?.rules ?? "[]") as [string, Filter, number[]][];
    const types = Object.entries(JSON.parse(row?.types ?? "{}") as Record<string, FieldType>);
    const held = new Map<string, HeldBy>();
    for (const [audienceId, setKind, seqs] of JSON.parse(row?.held ?? "[]") as [string, keyof HeldBy, number[]][]) {
      const sets = held.get(audienceId) ?? { include: [], exclude: [], member: [] };
      sets[setKind] = seqs;
      held.set(audienceId, sets);
    }
    return { types: new Map(types), rules: rules.map(([id, filter, matched]) => ({ id, filter, matched })), held };
  },

  /** The numbers among `seqs` of the members the rule matches now (evaluated by the database). */
  async matchesAmong(tx: Tx, workspaceId: string, filter: Filter, context: SqlContext, seqs: number[]) {
    if (seqs.length === 0) return [];
    const rows = await tx.$queryRaw<{ seq: number }[]>`
      SELECT m.seq FROM members AS m
      WHERE m.workspace_id = ${workspaceId} AND m.seq = ANY(${seqs}::int[]) AND ${filterSql(filter, context)}`;
    return rows.map((r) => r.seq);
  },

  /** Every audience of the workspace that has a rule, with it, in id order. */
  rules(db: SqlClient, workspaceId: string): Promise<{ id: string; filter: Filter; isArchived: boolean }[]> {
    return db.$queryRaw`
      SELECT id, filter, is_archived AS "isArchived" FROM audiences
      WHERE workspace_id = ${workspaceId} AND filter IS NOT NULL ORDER BY id`;
  },
};

export type RuleRepo = typeof ruleRepo;

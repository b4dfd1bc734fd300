import { Prisma } from "../../../../generated/prisma/client.ts";
import type { FieldType, FieldTypes } from "../../../domain/field-types.ts";
import type { SqlClient } from "../../../platform/db/sql-client.ts";
import {
  bitOf,
  CHUNK_BITS,
  chunkOf,
  kind,
  memberBits,
  NO_BITS,
  type SetKind,
  storedBits,
  storedHas,
} from "../member-bits-sql.ts";
import { MEMBER_COLUMNS, type MemberRow } from "../member-repo.ts";
import { matchingChunks } from "./audience-algebra-sql.ts";
import { declaredTypesSql, typesOf } from "./field-type-repo.ts";
import type { Filter } from "./filter.ts";
import { namedAudiencesSql, type SqlContext } from "./filter-sql.ts";

/** How many members of each side of a change are named. */
export const SAMPLE = 10;

export interface FilterChangeRow {
  memberCount: number;
  entering: number;
  leaving: number;
  enteringSample: string[];
  leavingSample: string[];
  /** The e-mail addresses of each sample, in its order (null for a member without one). */
  enteringEmails: (string | null)[];
  leavingEmails: (string | null)[];
}

export interface ExplainedMemberRow extends MemberRow {
  seq: number;
  isMember: boolean;
  included: boolean;
  excluded: boolean;
  /** The audiences the rule names that the member is in. */
  inAudiences: string[];
}

/** The first members (by number) of a set of chunks `source` (rows chunk, bits), as `column`. */
const firstMembers = (workspaceId: string, source: string, column: "id" | "email") => Prisma.sql`ARRAY(
  SELECT m.${Prisma.raw(column)} FROM (
    SELECT c.chunk * ${Prisma.raw(String(CHUNK_BITS))} + b.i AS seq
    FROM (SELECT chunk, bits FROM ${Prisma.raw(source)} WHERE bits <> ${NO_BITS} ORDER BY chunk LIMIT ${SAMPLE}) AS c
    CROSS JOIN LATERAL (
      SELECT i FROM generate_series(0, ${Prisma.raw(String(CHUNK_BITS - 1))}) AS g(i)
      WHERE get_bit(c.bits, i) = 1 ORDER BY i LIMIT ${SAMPLE}
    ) AS b
    ORDER BY seq LIMIT ${SAMPLE}
  ) AS s
  JOIN members AS m ON m.workspace_id = ${workspaceId} AND m.seq = s.seq
  ORDER BY s.seq)`;

/** Reads that tell what a rule is and would be; nothing here writes. */
export const ruleInsightRepo = {
  /**
   * What saving `filter` as the audience's rule would do, in one read: the rule's matches as
   * chunks, combined with the audience's include and exclude chunks as recompute does
   * (include ∨ (match ∧ ¬exclude)), compared chunk by chunk with its member chunks now.
   */
  async filterChange(
    db: SqlClient,
    workspaceId: string,
    audienceId: string,
    filter: Filter | null,
    context: SqlContext,
  ): Promise<FilterChangeRow> {
    const [row] = await db.$queryRaw<FilterChangeRow[]>`
      WITH r AS MATERIALIZED (
        SELECT * FROM (${matchingChunks(workspaceId, filter, context)}) AS r
      ),
      cur AS MATERIALIZED (
        SELECT t.kind, t.chunk, ${storedBits("t")} AS bits FROM membership_chunks AS t
        WHERE t.workspace_id = ${workspaceId} AND t.audience_id = ${audienceId}
      ),
      nm AS MATERIALIZED (
        SELECT c.chunk, ${memberBits(Prisma.sql`i.bits`, Prisma.sql`r.bits`, Prisma.sql`e.bits`)} AS bits
        FROM (SELECT chunk FROM cur WHERE kind = ${kind("include")} UNION SELECT chunk FROM r) AS c
        LEFT JOIN cur AS i ON i.kind = ${kind("include")} AND i.chunk = c.chunk
        LEFT JOIN cur AS e ON e.kind = ${kind("exclude")} AND e.chunk = c.chunk
        LEFT JOIN r ON r.chunk = c.chunk
      ),
      d AS MATERIALIZED (
        SELECT coalesce(nm.chunk, o.chunk) AS chunk, coalesce(o.bits, ${NO_BITS}) AS old, coalesce(nm.bits, ${NO_BITS}) AS new
        FROM nm FULL JOIN (SELECT chunk, bits FROM cur WHERE kind = ${kind("member")}) AS o ON o.chunk = nm.chunk
      ),
      entering AS MATERIALIZED (SELECT chunk, new & ~old AS bits FROM d),
      leaving AS MATERIALIZED (SELECT chunk, old & ~new AS bits FROM d)
      SELECT (SELECT coalesce(sum(bit_count(new)), 0)::int FROM d) AS "memberCount",
             (SELECT coalesce(sum(bit_count(bits)), 0)::int FROM entering) AS entering,
             (SELECT coalesce(sum(bit_count(bits)), 0)::int FROM leaving) AS leaving,
             ${firstMembers(workspaceId, "entering", "id")} AS "enteringSample",
             ${firstMembers(workspaceId, "leaving", "id")} AS "leavingSample",
             ${firstMembers(workspaceId, "entering", "email")} AS "enteringEmails",
             ${firstMembers(workspaceId, "leaving", "email")} AS "leavingEmails"`;
    return row as FilterChangeRow;
  },

  /**
   * Everything an explanation reads, in one statement: the audience's rule, the workspace's
   * declared types, and the member with its bits in the audience's member, include and exclude
   * sets and which audiences its rule names it is in. undefined for no such audience; `member`
   * undefined for no such member. The member's three bits come as the kinds of set it is in (a
   * subquery, not three joins: the embedded store plans every statement it runs, and five joined
   * tables took it twice as long to plan as this statement takes to run). Each named audience's
   * chunk is probed by key (LIMIT 1 keeps the probe a lookup: joined, the chunks of every audience
   * at the member's chunk could be read). With `draft`, the audiences named are the draft
   * rule's, and the draft is the filter answered (an explanation of a rule not saved yet).
   */
  async explained(
    db: SqlClient,
    workspaceId: string,
    audienceId: string,
    memberId: string,
    draft?: { filter: Filter | null },
  ): Promise<{ filter: Filter | null; types: FieldTypes; member?: ExplainedMemberRow } | undefined> {
    const seq = Prisma.sql`m.seq`;
    const named = draft ? Prisma.sql`${JSON.stringify(draft.filter)}::jsonb` : Prisma.sql`a.filter`;
    const [row] = await db.$queryRaw<
      (Omit<ExplainedMemberRow, "id" | "isMember" | "included" | "excluded"> & {
        id: string | null;
        filter: Filter | null;
        types: Record<string, Exclude<FieldType, "string">>;
        kinds: SetKind[];
      })[]
    >`
      SELECT a.filter, ${declaredTypesSql(Prisma.sql`a.workspace_id`)} AS types, ${MEMBER_COLUMNS}, m.seq,
             ARRAY(
               SELECT c.kind::text FROM membership_chunks AS c
               WHERE c.workspace_id = a.workspace_id AND c.audience_id = a.id
                 AND c.kind IN (${kind("member")}, ${kind("include")}, ${kind("exclude")}) AND c.chunk = ${chunkOf(seq)}
                 AND ${storedHas("c", bitOf(seq))}
             ) AS kinds,
             ARRAY(
               SELECT x.id FROM (SELECT DISTINCT x.id FROM (${namedAudiencesSql(named)}) AS x(id)) AS x
               CROSS JOIN LATERAL (
                 SELECT n.bits, n.seqs FROM membership_chunks AS n
                 WHERE n.workspace_id = a.workspace_id AND n.audience_id = x.id AND n.kind = ${kind("member")}
                   AND n.chunk = ${chunkOf(seq)}
                 LIMIT 1
               ) AS n
               WHERE ${storedHas("n", bitOf(seq))}
               ORDER BY x.id
             ) AS "inAudiences"
      FROM audiences AS a
      LEFT JOIN members AS m ON m.workspace_id = a.workspace_id AND m.id = ${memberId}
      WHERE a.workspace_id = ${workspaceId} AND a.id = ${audienceId}`;
    if (!row) return undefined;
    const { filter: saved, types, id, kinds, ...member } = row;
    const filter = draft ? draft.filter : saved;
    if (id === null) return { filter, types: typesOf(types) };
    const has = (k: SetKind) => kinds.includes(k);
    return {
      filter,
      types: typesOf(types),
      member: { ...member, id, isMember: has("member"), included: has("include"), excluded: has("exclude") },
    };
  },
};

export type RuleInsightRepo = typeof ruleInsightRepo;

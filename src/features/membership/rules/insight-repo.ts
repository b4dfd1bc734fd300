import { Prisma } from "../../../../generated/prisma/client.ts";
import type { SqlClient } from "../../../platform/db/sql-client.ts";
import { bitOf, CHUNK_BITS, chunkOf, kind, NO_BITS } from "../member-bits-sql.ts";
import { hidden, MEMBER_COLUMNS, type MemberRow } from "../member-repo.ts";
import { matchingChunks } from "./audience-algebra-sql.ts";
import type { Filter } from "./filter.ts";
import type { SqlContext } from "./filter-sql.ts";

/** How many members of each side of a change are named. */
const SAMPLE = 10;

export interface FilterChangeRow {
  memberCount: number;
  entering: number;
  leaving: number;
  enteringSample: string[];
  leavingSample: string[];
}

export interface ExplainedMemberRow extends MemberRow {
  isMember: boolean;
  included: boolean;
  excluded: boolean;
  /** The audiences among those asked about that the member is in. */
  inAudiences: string[];
}

/** The first members (by number) of a set of chunks `source` (rows chunk, bits), as their ids. */
const firstIds = (workspaceId: string, source: string) => Prisma.sql`ARRAY(
  SELECT m.id FROM (
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
        SELECT t.kind, t.chunk, t.bits FROM membership_chunks AS t
        WHERE t.workspace_id = ${workspaceId} AND t.audience_id = ${audienceId}
      ),
      nm AS MATERIALIZED (
        SELECT c.chunk, coalesce(i.bits, ${NO_BITS}) | (coalesce(r.bits, ${NO_BITS}) & ~coalesce(e.bits, ${NO_BITS})) AS bits
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
             ${firstIds(workspaceId, "entering")} AS "enteringSample",
             ${firstIds(workspaceId, "leaving")} AS "leavingSample"`;
    return row as FilterChangeRow;
  },

  /**
   * A member with its bits in the audience's member, include and exclude sets, and which of
   * `named` (the audiences its rule's conditions name) it is in; undefined for no such member.
   */
  async explained(
    db: SqlClient,
    workspaceId: string,
    audienceId: string,
    memberId: string,
    named: string[],
  ): Promise<ExplainedMemberRow | undefined> {
    const seq = Prisma.sql`m.seq`;
    const bit = (alias: string) => Prisma.sql`coalesce(get_bit(${Prisma.raw(alias)}.bits, ${bitOf(seq)}), 0) = 1`;
    const chunk = (alias: string, k: "member" | "include" | "exclude") => Prisma.sql`
      LEFT JOIN membership_chunks AS ${Prisma.raw(alias)}
        ON ${Prisma.raw(alias)}.workspace_id = m.workspace_id AND ${Prisma.raw(alias)}.audience_id = ${audienceId}
        AND ${Prisma.raw(alias)}.kind = ${kind(k)} AND ${Prisma.raw(alias)}.chunk = ${chunkOf(seq)}`;
    const [row] = await db.$queryRaw<ExplainedMemberRow[]>`
      SELECT ${MEMBER_COLUMNS}, ${bit("t")} AS "isMember", ${bit("i")} AS included, ${bit("e")} AS excluded,
             ARRAY(
               SELECT a.id FROM unnest(${named}::text[]) AS a(id)
               JOIN membership_chunks AS n
                 ON n.workspace_id = m.workspace_id AND n.audience_id = a.id AND n.kind = ${kind("member")}
                 AND n.chunk = ${chunkOf(seq)}
               WHERE get_bit(n.bits, ${bitOf(seq)}) = 1
             ) AS "inAudiences"
      FROM members AS m
      ${chunk("t", "member")}
      ${chunk("i", "include")}
      ${chunk("e", "exclude")}
      WHERE m.workspace_id = ${hidden(workspaceId)} AND m.id = ${memberId}`;
    return row;
  },
};

export type RuleInsightRepo = typeof ruleInsightRepo;

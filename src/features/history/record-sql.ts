import { Prisma } from "../../../generated/prisma/client.ts";
import { CHUNK_BITS, CHUNK_SHIFT } from "../membership/member-bits-sql.ts";

// The pieces of record-repo.ts's statements.

/** The member's row by number: the member, or the record of its deletion. */
export const memberOf = (workspaceId: string, seq: Prisma.Sql) => Prisma.sql`
  LEFT JOIN members AS m ON m.workspace_id = ${workspaceId} AND m.seq = ${seq}
  LEFT JOIN deleted_members AS d ON d.workspace_id = ${workspaceId} AND d.seq = ${seq} AND m.id IS NULL`;

export const SHIFT = Prisma.raw(String(CHUNK_SHIFT));
export const BIT = Prisma.raw(String(CHUNK_BITS - 1));

/**
 * Of a CTE `name` of chunks (chunk, bits, n: bits set), the ones a keyset page walking from
 * member number `cursor` can take its `limit` numbers from: the cursor's chunk and those after it
 * until they hold enough, so that only they are spelled out into member numbers.
 */
export const pageChunks = (name: string, ascending: boolean, limit: number, cursor: number | undefined) => {
  const order = ascending ? Prisma.sql`ASC` : Prisma.sql`DESC`;
  const from =
    cursor === undefined
      ? Prisma.sql`true`
      : Prisma.sql`x.chunk ${ascending ? Prisma.sql`>=` : Prisma.sql`<=`} ${cursor >> CHUNK_SHIFT}`;
  return Prisma.sql`SELECT y.chunk, y.bits FROM (
      SELECT x.chunk, x.bits, row_number() OVER w AS k,
        coalesce(sum(x.n) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) - first_value(x.n) OVER w AS past
      FROM ${Prisma.raw(name)} AS x WHERE ${from} WINDOW w AS (ORDER BY x.chunk ${order})
    ) AS y WHERE y.k = 1 OR y.past < ${limit + 1}`;
};

/** The latest row of the record at chunk `chunk` before `before` (SQL), as a LATERAL's body. */
export const latestBefore = (
  workspaceId: string,
  audienceId: Prisma.Sql,
  chunk: Prisma.Sql,
  before: Prisma.Sql,
) => Prisma.sql`
  SELECT r.members, r.entered, r.reason, r.at FROM membership_record AS r
  WHERE r.workspace_id = ${workspaceId} AND r.audience_id = ${audienceId} AND r.chunk = ${chunk} AND r.at < ${before}`;

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
 * Of a CTE `name` of runs of bits (chunk, bits, n: bits set; run k holds the numbers from
 * k << shift on), the ones a keyset page walking from member number `cursor` can take its `limit`
 * numbers from: the cursor's run and those after it until they hold enough, so that only they
 * are spelled out into member numbers.
 */
export const pageChunks = (
  name: string,
  ascending: boolean,
  limit: number,
  cursor: number | undefined,
  shift: number = CHUNK_SHIFT,
) => {
  const order = ascending ? Prisma.sql`ASC` : Prisma.sql`DESC`;
  const from =
    cursor === undefined
      ? Prisma.sql`true`
      : Prisma.sql`x.chunk ${ascending ? Prisma.sql`>=` : Prisma.sql`<=`} ${cursor >> shift}`;
  return Prisma.sql`SELECT y.chunk, y.bits FROM (
      SELECT x.chunk, x.bits, row_number() OVER w AS k,
        coalesce(sum(x.n) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) - first_value(x.n) OVER w AS past
      FROM ${Prisma.raw(name)} AS x WHERE ${from} WINDOW w AS (ORDER BY x.chunk ${order})
    ) AS y WHERE y.k = 1 OR y.past < ${limit + 1}`;
};

/** A page spells out member numbers from runs of 256 bits of its chunks, not from whole chunks. */
const RUN_SHIFT = 8;
const RUN_BITS = 1 << RUN_SHIFT;
/** The last run of a chunk (its runs are numbered from 0). */
const LAST_RUN = Prisma.raw(String(CHUNK_BITS / RUN_BITS - 1));

/**
 * The common table expressions pc, pw, pv and p of a keyset page of member numbers from a CTE
 * `name` of chunks (chunk, bits, n): p holds (seq), the `limit` + 1 numbers past `cursor` in the
 * page's order. The page's chunks (pageChunks) are cut into runs of 256 bits and only the runs
 * the page needs are spelled out: a chunk's 8,192 bits as text, split into characters, cost
 * 3 ms each, two of them most of what a page as of an instant cost.
 */
export const pageSeqs = (name: string, ascending: boolean, limit: number, cursor: number | undefined) => {
  const order = ascending ? Prisma.sql`ASC` : Prisma.sql`DESC`;
  const beyond =
    cursor === undefined ? Prisma.sql`true` : ascending ? Prisma.sql`s.seq > ${cursor}` : Prisma.sql`s.seq < ${cursor}`;
  const run = Prisma.sql`substring(x.bits FROM w.i * ${Prisma.raw(String(RUN_BITS))} + 1 FOR ${Prisma.raw(String(RUN_BITS))})`;
  return Prisma.sql`
    pc AS (${pageChunks(name, ascending, limit, cursor)}),
    pw AS (
      SELECT v.chunk, v.bits, v.n FROM (
        SELECT (x.chunk << ${Prisma.raw(String(CHUNK_SHIFT - RUN_SHIFT))}) + w.i AS chunk, ${run} AS bits,
          bit_count(${run})::int AS n
        FROM pc AS x CROSS JOIN generate_series(0, ${LAST_RUN}) AS w(i)
      ) AS v WHERE v.n > 0
    ),
    pv AS (${pageChunks("pw", ascending, limit, cursor, RUN_SHIFT)}),
    p AS (
      SELECT s.seq FROM (
        SELECT v.chunk * ${Prisma.raw(String(RUN_BITS))} + q.i - 1 AS seq
        FROM pv AS v CROSS JOIN LATERAL unnest(array_positions(string_to_array(v.bits::text, NULL), '1')) AS q(i)
      ) AS s WHERE ${beyond} ORDER BY s.seq ${order} LIMIT ${limit + 1}
    )`;
};

/**
 * Whether a chunk `bits` (SQL) has members at or before member number `cursor` in the order
 * walked (at or below it ascending, at or above it descending): the bits on that side counted.
 */
export const anyBehindIn = (bits: Prisma.Sql, ascending: boolean, cursor: number) => {
  const bit = cursor & (CHUNK_BITS - 1);
  return ascending
    ? Prisma.sql`bit_count(substring(${bits} FROM 1 FOR ${bit + 1}::int)) > 0`
    : Prisma.sql`bit_count(substring(${bits} FROM ${bit + 1}::int)) > 0`;
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

import { Prisma } from "../../../generated/prisma/client.ts";
import { CHUNK_BITS, CHUNK_SHIFT } from "./member-bits-sql.ts";

/**
 * Where a keyset page of member numbers starts: past a member number known in the process (a
 * cursor's), or at one the statement works out (`at`, SQL: an audience page's first member past
 * its place). Undefined: at the very beginning.
 */
export type PageStart = number | { at: Prisma.Sql } | undefined;

/** The run (or chunk) a page's start falls in, of runs of 2^shift numbers. */
const runOf = (start: number | { at: Prisma.Sql }, shift: number) =>
  typeof start === "number" ? Prisma.sql`${start >> shift}` : Prisma.sql`(${start.at} >> ${Prisma.raw(String(shift))})`;

/**
 * Of a CTE `name` of runs of bits (chunk, bits, n: bits set; run k holds the numbers from
 * k << shift on), the ones a keyset page walking from `start` can take its `limit` numbers from:
 * the start's run and those after it until they hold enough, so that only they are spelled out
 * into member numbers.
 */
export const pageChunks = (
  name: string,
  ascending: boolean,
  limit: number,
  start: PageStart,
  shift: number = CHUNK_SHIFT,
) => {
  const order = ascending ? Prisma.sql`ASC` : Prisma.sql`DESC`;
  const from =
    start === undefined
      ? Prisma.sql`true`
      : Prisma.sql`x.chunk ${ascending ? Prisma.sql`>=` : Prisma.sql`<=`} ${runOf(start, shift)}`;
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
 * `name` of chunks (chunk, bits, n): p holds (seq), the `limit` + 1 numbers from `start` (past
 * a cursor's number, at a number worked out in SQL) in the page's order. The page's chunks
 * (pageChunks) are cut into runs of 256 bits and only the runs the page needs are spelled out: a
 * chunk's 8,192 bits as text, split into characters, cost 3 ms each, two of them most of what a
 * page as of an instant cost. The history's pages as of an instant and an audience's sparse pages
 * read their numbers this way.
 */
export const pageSeqs = (name: string, ascending: boolean, limit: number, start: PageStart) => {
  const order = ascending ? Prisma.sql`ASC` : Prisma.sql`DESC`;
  const beyond =
    start === undefined
      ? Prisma.sql`true`
      : typeof start === "number"
        ? Prisma.sql`s.seq ${ascending ? Prisma.sql`>` : Prisma.sql`<`} ${start}`
        : Prisma.sql`s.seq ${ascending ? Prisma.sql`>=` : Prisma.sql`<=`} ${start.at}`;
  const run = Prisma.sql`substring(x.bits FROM w.i * ${Prisma.raw(String(RUN_BITS))} + 1 FOR ${Prisma.raw(String(RUN_BITS))})`;
  return Prisma.sql`
    pc AS (${pageChunks(name, ascending, limit, start)}),
    pw AS (
      SELECT v.chunk, v.bits, v.n FROM (
        SELECT (x.chunk << ${Prisma.raw(String(CHUNK_SHIFT - RUN_SHIFT))}) + w.i AS chunk, ${run} AS bits,
          bit_count(${run})::int AS n
        FROM pc AS x CROSS JOIN generate_series(0, ${LAST_RUN}) AS w(i)
      ) AS v WHERE v.n > 0
    ),
    pv AS (${pageChunks("pw", ascending, limit, start, RUN_SHIFT)}),
    p AS (
      SELECT s.seq FROM (
        SELECT v.chunk * ${Prisma.raw(String(RUN_BITS))} + q.i - 1 AS seq
        FROM pv AS v CROSS JOIN LATERAL unnest(array_positions(string_to_array(v.bits::text, NULL), '1')) AS q(i)
      ) AS s WHERE ${beyond} ORDER BY s.seq ${order} LIMIT ${limit + 1}
    )`;
};

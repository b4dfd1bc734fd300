import { Prisma } from "../../../generated/prisma/client.ts";
import { jsonRows } from "../../platform/db/json-rows.ts";
import { setBitPositions } from "./bitset.ts";
import { CHUNK_BITS, CHUNK_SHIFT, memberSetOf } from "./member-set.ts";

export { CHUNK_BITS, CHUNK_SHIFT };

/**
 * Membership sets are bitsets over member numbers (members.seq), stored in membership_chunks as
 * bit(8192) values (a chunk of few members as their positions: storedBits): bit i of chunk c
 * stands for member number c × 8192 + i, counted from the left as PostgreSQL's get_bit counts
 * (member-set.ts reads them the same way). These are the SQL pieces every membership statement
 * shares; the set arithmetic stays in the database, and only chunks that a caller must read (a
 * page, what changed) come back.
 */
const WORDS_PER_CHUNK = CHUNK_BITS / 64;

/**
 * A chunk's bits as base64 text (bit_send gives its bytes after a 4-byte length): on the embedded
 * store a bytea column costs a query more to hand over than this text.
 */
export const base64Of = (bits: Prisma.Sql) => Prisma.sql`encode(substring(bit_send(${bits}) FROM 5), 'base64')`;

/** A chunk read back as base64Of wrote it. */
export const chunkBytes = (base64: string): Uint8Array => Buffer.from(base64, "base64");

/** The empty chunk. */
export const NO_BITS = Prisma.sql`${Prisma.raw(`B'0'::bit(${CHUNK_BITS})`)}`;

/**
 * A stored chunk's bits (SQL over the membership_chunks row aliased `alias`). A chunk of few
 * members is stored as their positions (`seqs`, `bits` NULL; the migration
 * membership_chunk_positions declares how few and converts on write), so that a change of one
 * bit writes bytes, not a kilobyte: every reader of a chunk reads it through here. A full chunk
 * costs nothing more (coalesce does not evaluate the positions when the bits are there).
 * Writers write whole bits; the trigger sets `seqs` and `count`. An upsert's EXCLUDED row is
 * already stored that way (the trigger ran for the insert): read it through here too, or take it
 * as it is (takeStored).
 */
export const storedBits = (alias: string) =>
  Prisma.sql`coalesce(${Prisma.raw(alias)}.bits, chunk_bits(${Prisma.raw(alias)}.seqs))`;

/** An upsert's update to the row it would have inserted, as the trigger stored it (SET list). */
export const takeStored = Prisma.sql`bits = EXCLUDED.bits, seqs = EXCLUDED.seqs, count = EXCLUDED.count`;

/** Whether two stored chunks differ: each form is the one its bits call for, so comparing forms will do. */
export const storedDiffer = (a: string, b: string) =>
  Prisma.sql`(${Prisma.raw(a)}.bits, ${Prisma.raw(a)}.seqs) IS DISTINCT FROM (${Prisma.raw(b)}.bits, ${Prisma.raw(b)}.seqs)`;

/**
 * Whether the stored chunk aliased `alias` holds position `at` (SQL over an integer expression):
 * a test of one bit reads the positions as they are stored instead of spelling out the chunk.
 */
export const storedHas = (alias: string, at: Prisma.Sql) =>
  Prisma.sql`coalesce(get_bit(${Prisma.raw(alias)}.bits, ${at}) = 1, ${at} = ANY(${Prisma.raw(alias)}.seqs))`;

/**
 * The membership rule on one chunk, member = include ∨ (match ∧ ¬exclude), over three chunks' bits
 * (SQL; NULL: no such chunk): the one place a statement works out an audience's members from its
 * sets (member-set.ts's isMember is the same rule in process).
 */
export const memberBits = (include: Prisma.Sql, match: Prisma.Sql, exclude: Prisma.Sql) =>
  Prisma.sql`coalesce(${include}, ${NO_BITS}) | (coalesce(${match}, ${NO_BITS}) & ~coalesce(${exclude}, ${NO_BITS}))`;

/** The chunks (rows chunk, bits) of an audience's member set. */
export const audienceMemberChunks = (workspaceId: string, audienceId: string) =>
  Prisma.sql`SELECT c.chunk, ${storedBits("c")} AS bits FROM membership_chunks AS c
    WHERE c.workspace_id = ${workspaceId} AND c.audience_id = ${audienceId}::text AND c.kind = ${kind("member")}`;

/**
 * Whether a member is in a set of chunks (`chunks`, a query of rows chunk, bits), for a statement
 * that tests many members: the set is read once, as an array with chunk c at index c + 1 (NULL
 * where the set has none; an uncorrelated subquery, which the database evaluates once per
 * statement), and each member's bit is read from its chunk there. A lookup of the member's chunk
 * by key for each member cost the embedded store fifteen times as much on a scan of every member;
 * it stays the cheaper read where a statement tests a few members named by number.
 */
export const inChunks = (chunks: Prisma.Sql, seq: Prisma.Sql) => Prisma.sql`coalesce(get_bit((
    WITH s AS MATERIALIZED (${chunks})
    SELECT array_agg(s.bits ORDER BY g.i) FROM generate_series(0, (SELECT max(chunk) FROM s)) AS g(i)
    LEFT JOIN s ON s.chunk = g.i
  )[${chunkOf(seq)} + 1], ${bitOf(seq)}) = 1, false)`;

/** Which chunk a member number falls in, and its bit there (SQL over an integer expression). */
export const chunkOf = (seq: Prisma.Sql) => Prisma.sql`(${seq} >> ${Prisma.raw(String(CHUNK_SHIFT))})`;
export const bitOf = (seq: Prisma.Sql) => Prisma.sql`(${seq} & ${Prisma.raw(String(CHUNK_BITS - 1))})`;

/**
 * The chunks of a set of member numbers, as rows (chunk, bits): `numbers` is a query with an
 * integer column `seq`. Numbers are gathered into 64-bit words first (one hash aggregation), then
 * each chunk is spelled out in hex from the words it has, the words it lacks written as zeros.
 */
export function chunksOf(numbers: Prisma.Sql): Prisma.Sql {
  const words = Prisma.raw(String(WORDS_PER_CHUNK));
  // Only the words present are rows (a chunk of a sparse set costs what it holds, not 128 rows):
  // each is preceded by the zeros of the words missing before it, and the chunk is closed with
  // the zeros of those missing after its last.
  return Prisma.sql`(
    WITH words AS (
      SELECT n.seq >> 6 AS word, bit_or(1::int8 << (63 - (n.seq & 63))) AS bits
      FROM (${numbers}) AS n GROUP BY word
    ),
    placed AS (
      SELECT word / ${words} AS chunk, word % ${words} AS k, bits,
             lag(word % ${words}, 1, -1) OVER (PARTITION BY word / ${words} ORDER BY word) AS before
      FROM words
    )
    SELECT chunk,
           ('x' || string_agg(repeat('0', 16 * (k - before - 1)::int) || lpad(to_hex(bits), 16, '0'), '' ORDER BY k)
                || repeat('0', 16 * (${words} - 1 - max(k))::int))::${Prisma.raw(`bit(${CHUNK_BITS})`)} AS bits
    FROM placed GROUP BY chunk
  )`;
}

/**
 * A set of member numbers known in the process, as rows (chunk, bits) spelled out here rather
 * than by chunksOf: where the members are known (a member's edit, a hand-picked add, a delete),
 * this spares the statement the aggregation, and its plan, that turns numbers into chunks. The
 * chunks travel as chunkText spells them, in one JSON parameter.
 */
export const knownChunksOf = (seqs: number[]): Prisma.Sql => spelledOut([{ grp: "", seqs }], false);

/** The same per group: one set per `grp`, as rows (grp, chunk, bits). */
export const knownGroupedChunksOf = (groups: { grp: string; seqs: number[] }[]): Prisma.Sql => spelledOut(groups, true);

function spelledOut(groups: { grp: string; seqs: number[] }[], grouped: boolean): Prisma.Sql {
  const rows = groups.flatMap(({ grp, seqs }) => {
    const byChunk = new Map<number, number[]>();
    for (const seq of new Set(seqs)) {
      const members = byChunk.get(seq >> CHUNK_SHIFT);
      if (members) members.push(seq);
      else byChunk.set(seq >> CHUNK_SHIFT, [seq]);
    }
    return [...byChunk].map(([chunk, members]) => ({
      grp,
      chunk,
      bits:
        members.length > FEW_BITS
          ? hexOf(memberSetOf(members).get(chunk) as Uint8Array)
          : `p${members.map((seq) => seq & (CHUNK_BITS - 1)).join(",")}`,
    }));
  });
  const columns = {
    ...(grouped ? { grp: rows.map((row) => row.grp) } : {}),
    chunk: rows.map((row) => row.chunk),
    bits: rows.map((row) => row.bits),
  };
  return Prisma.sql`(SELECT ${grouped ? Prisma.sql`v.grp, ` : Prisma.empty}v.chunk::int AS chunk,
    ${bitsOfText(Prisma.sql`v.bits`)} AS bits FROM ${jsonRows("v", columns)})`;
}

/** Chunks with at most this many members travel as their positions rather than 2,048 hex digits. */
const FEW_BITS = 16;

/**
 * A chunk as text for a statement's parameter, read back by bitsOfText: its 2,048 hex digits, or,
 * for a chunk of few members, "p" and their positions ("p5,812"). A write near a few members (an
 * edit, a clock tick's crossings, each in a chunk of its own) sends a few bytes per chunk instead
 * of 2 KB, which the process had to spell out and the database to parse.
 */
export function chunkText(bytes: Uint8Array): string {
  const positions: number[] = [];
  for (const position of setBitPositions(bytes, false)) {
    if (positions.push(position) > FEW_BITS) return hexOf(bytes);
  }
  return `p${positions.join(",")}`;
}

const hexOf = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");

/** A chunk from chunkText's text (SQL over a text expression). */
export const bitsOfText = (text: Prisma.Sql) => Prisma.sql`(CASE WHEN left(${text}, 1) = 'p'
    THEN coalesce((SELECT bit_or(set_bit(${NO_BITS}, p::int, 1)) FROM unnest(string_to_array(substr(${text}, 2), ',')) AS p), ${NO_BITS})
    ELSE ('x' || ${text})::${Prisma.raw(`bit(${CHUNK_BITS})`)} END)`;

/** The kinds of set an audience has (the membership_kind enum). */
export type SetKind = "member" | "include" | "exclude" | "match";
export const kind = (k: SetKind) => Prisma.sql`${Prisma.raw(`'${k}'`)}::membership_kind`;

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

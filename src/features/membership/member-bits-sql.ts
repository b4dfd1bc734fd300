import { Prisma } from "../../../generated/prisma/client.ts";
import { jsonRows } from "../../platform/db/json-rows.ts";
import { CHUNK_BITS, CHUNK_SHIFT, type MemberSet, memberSetOf } from "./member-set.ts";

export { CHUNK_BITS, CHUNK_SHIFT };

/**
 * Membership sets are bitsets over member numbers (members.seq), stored in membership_chunks as
 * bit(8192) values: bit i of chunk c stands for member number c × 8192 + i, counted from the
 * left as PostgreSQL's get_bit counts (src/features/membership/member-set.ts reads them the same way). These
 * are the SQL pieces every membership statement shares; the set arithmetic stays in the
 * database, and only chunks that a caller must read (a page, what changed) come back.
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
 * chunks travel as hex (2,048 characters each) in one JSON parameter.
 */
export const knownChunksOf = (seqs: number[]): Prisma.Sql => spelledOut([{ grp: "", set: memberSetOf(seqs) }], false);

/** The same per group: one set per `grp`, as rows (grp, chunk, bits). */
export const knownGroupedChunksOf = (groups: { grp: string; seqs: number[] }[]): Prisma.Sql =>
  spelledOut(
    groups.map(({ grp, seqs }) => ({ grp, set: memberSetOf(seqs) })),
    true,
  );

function spelledOut(sets: { grp: string; set: MemberSet }[], grouped: boolean): Prisma.Sql {
  const rows = sets.flatMap(({ grp, set }) => [...set].map(([chunk, bytes]) => ({ grp, chunk, bytes })));
  const columns = {
    ...(grouped ? { grp: rows.map((row) => row.grp) } : {}),
    chunk: rows.map((row) => row.chunk),
    hex: rows.map((row) => Buffer.from(row.bytes.buffer, row.bytes.byteOffset, row.bytes.byteLength).toString("hex")),
  };
  return Prisma.sql`(SELECT ${grouped ? Prisma.sql`v.grp, ` : Prisma.empty}v.chunk::int AS chunk,
    ('x' || v.hex)::${Prisma.raw(`bit(${CHUNK_BITS})`)} AS bits FROM ${jsonRows("v", columns)})`;
}

/** The kinds of set an audience has (the membership_kind enum). */
export type SetKind = "member" | "include" | "exclude" | "match";
export const kind = (k: SetKind) => Prisma.sql`${Prisma.raw(`'${k}'`)}::membership_kind`;

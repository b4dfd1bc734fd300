import { Prisma } from "../../../generated/prisma/client.ts";
import { jsonRows } from "../../platform/db/json-rows.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";
import { bitsOfText, CHUNK_BITS, CHUNK_SHIFT, chunkText, NO_BITS, storedBits } from "./member-bits-sql.ts";
import { joinChunk, readsByKey } from "./membership-sql.ts";
import type { SizeChange } from "./net-changes.ts";
import type { OutboxEntry } from "./outbox-entries.ts";

/**
 * Each chunk of an audience's members at instant `before` (exclusive: a millisecond after the
 * instant asked for), as rows (chunk, bits): the chunk's members after its latest write before
 * then, one probe of the record's key per chunk of the workspace's member numbers, however old the
 * instant. Optionally only the chunks that hold a range of numbers.
 */
export const chunksAtSql = (
  workspaceId: string,
  audienceId: string,
  before: Date,
  range?: { from: number; to: number },
) => Prisma.sql`
  SELECT g.chunk, s.members AS bits
  FROM workspaces AS w
  CROSS JOIN LATERAL generate_series(
    ${range === undefined ? Prisma.sql`0` : Prisma.sql`${range.from}::int >> ${Prisma.raw(String(CHUNK_SHIFT))}`},
    ${range === undefined ? Prisma.sql`w.member_seq` : Prisma.sql`least(w.member_seq, ${range.to}::int - 1)`} >> ${Prisma.raw(String(CHUNK_SHIFT))}
  ) AS g(chunk)
  CROSS JOIN LATERAL (
    SELECT r.members FROM membership_record AS r
    WHERE r.workspace_id = ${workspaceId} AND r.audience_id = ${audienceId} AND r.chunk = g.chunk
      AND r.at < ${before}::timestamptz
    ORDER BY r.at DESC LIMIT 1
  ) AS s
  WHERE w.workspace_id = ${workspaceId} AND s.members IS NOT NULL AND s.members <> ${NO_BITS}`;

/**
 * The member numbers of a query of chunks (rows chunk, bits), as rows (seq); with a range, only
 * the bits of each chunk that fall in it are read (an export reads 256 numbers at a time).
 */
export const seqsOfChunksSql = (chunks: Prisma.Sql, range?: { from: number; to: number }) => {
  // The bits as text, split into characters, and the positions of the ones: one call each per
  // chunk, where get_bit for each of 8,192 positions cost ten times as much.
  const seq = Prisma.sql`c.chunk * ${Prisma.raw(String(CHUNK_BITS))} + p.i - 1`;
  return Prisma.sql`
    SELECT ${seq} AS seq
    FROM (${chunks}) AS c CROSS JOIN LATERAL unnest(array_positions(string_to_array(c.bits::text, NULL), '1')) AS p(i)
    ${range === undefined ? Prisma.empty : Prisma.sql`WHERE ${seq} >= ${range.from}::int AND ${seq} < ${range.to}::int`}`;
};

/**
 * The member numbers of one audience at instant `before` (as chunksAtSql), optionally within a
 * range of numbers, as rows (seq). Read by exports.
 */
export const membersAtSql = (
  workspaceId: string,
  audienceId: string,
  before: Date,
  range?: { from: number; to: number },
) => seqsOfChunksSql(chunksAtSql(workspaceId, audienceId, before, range), range);

/**
 * Where a write records what it did, in its transaction, from its netted entries: its events (the
 * outbox), who entered and left each audience (the membership record) and the audiences' new
 * sizes (the size history), all three at one instant, so that they cannot disagree.
 */
export interface WriteRecords {
  record(tx: SqlClient, workspaceId: string, entries: OutboxEntry[], sizes: SizeChange[]): Promise<void>;
}

/**
 * The other features' parts of a write's closing statement, as common table expressions, passed
 * by the composition root (membership imports no feature): the outbox's (events' outbox-repo.ts)
 * and the size history's (insight's history-repo.ts), at the instant the statement gives them.
 */
export interface WriteRecordParts {
  events(workspaceId: string, entries: OutboxEntry[]): Prisma.Sql | undefined;
  history(workspaceId: string, changes: SizeChange[], at: Prisma.Sql): Prisma.Sql;
}

/**
 * The membership record's rows of a write's netted audience.members_changed entries, as common
 * table expressions (named rec_*) reading the instant from rec_t; undefined when they moved nobody.
 *
 * One row per audience, reason and chunk the write changed: who entered, who left (as they
 * travel, chunkText's positions or hex), and the chunk's members as the write leaves them, read
 * from membership_chunks in the same statement: a million members moved by a rule are ~123 rows,
 * not a million. The instant is the statement's clock, kept to the microsecond so that two writes
 * never share one. A write holds the rows of the audiences it changed until it commits, so for one
 * audience a later write's instant is never earlier (were two equal, the rows merge, the later's
 * members standing).
 */
function recordSql(workspaceId: string, entries: OutboxEntry[]): Prisma.Sql | undefined {
  const rows: { a: string; r: string; chunk: number; e: string; l: string }[] = [];
  for (const entry of entries) {
    if (entry.type !== "audience.members_changed") continue;
    const chunks = new Set([...entry.entered.keys(), ...entry.left.keys()]);
    for (const chunk of [...chunks].sort((x, y) => x - y)) {
      const entered = entry.entered.get(chunk);
      const left = entry.left.get(chunk);
      rows.push({
        a: entry.audienceId,
        r: entry.reason,
        chunk,
        e: entered === undefined ? "" : chunkText(entered),
        l: left === undefined ? "" : chunkText(left),
      });
    }
  }
  if (rows.length === 0) return undefined;
  const columns = {
    a: rows.map((row) => row.a),
    r: rows.map((row) => row.r),
    chunk: rows.map((row) => row.chunk),
    e: rows.map((row) => row.e),
    l: rows.map((row) => row.l),
  };
  const bits = (text: string) =>
    Prisma.sql`CASE WHEN ${Prisma.raw(text)} IN ('', 'p') THEN NULL ELSE ${bitsOfText(Prisma.raw(text))} END`;
  return Prisma.sql`
    rec_v AS (SELECT v.a, v.r, v.chunk::int AS chunk, ${bits("v.e")} AS entered, ${bits("v.l")} AS exited FROM ${jsonRows("v", columns)}),
    rec_ins AS (
      INSERT INTO membership_record AS x (workspace_id, audience_id, chunk, at, reason, entered, exited, members)
      SELECT ${workspaceId}, v.a, v.chunk, t.at, v.r, v.entered, v.exited, coalesce(${storedBits("c")}, ${NO_BITS})
      FROM rec_v AS v CROSS JOIN rec_t AS t
      ${joinChunk("c", workspaceId, "member", { audience: Prisma.sql`v.a`, chunk: Prisma.sql`v.chunk` }, readsByKey(rows.length))}
      ON CONFLICT (workspace_id, audience_id, chunk, at, reason) DO UPDATE SET
        entered = nullif((coalesce(x.entered, ${NO_BITS}) & ~coalesce(EXCLUDED.exited, ${NO_BITS})) | coalesce(EXCLUDED.entered, ${NO_BITS}), ${NO_BITS}),
        exited = nullif((coalesce(x.exited, ${NO_BITS}) & ~coalesce(EXCLUDED.entered, ${NO_BITS})) | coalesce(EXCLUDED.exited, ${NO_BITS}), ${NO_BITS}),
        members = EXCLUDED.members
    )`;
}

/**
 * The membership record (membership_record): every entry into and exit from an audience, by chunk
 * of member numbers. Written by membership-service.ts once per write, in its transaction, from the
 * same netted events as the feed and the size history, so the three cannot disagree; read by
 * src/features/history/ and exports.
 *
 * A write's events, its record and its size history are one statement of data-modifying common
 * table expressions: on the embedded store a statement's fixed cost is most of what a small
 * write's record costs, so the record rides in the statement the outbox needs anyway. They
 * touch different tables, and read only what the write's earlier statements left (the chunks, the
 * audiences' member_count), which one statement's snapshot sees.
 */
export function writeRecords(parts: WriteRecordParts): WriteRecords {
  return {
    async record(tx, workspaceId, entries, sizes) {
      const ctes = [
        parts.events(workspaceId, entries),
        recordSql(workspaceId, entries),
        sizes.length > 0 ? parts.history(workspaceId, sizes, Prisma.sql`(SELECT at FROM rec_t)`) : undefined,
      ].filter((part): part is Prisma.Sql => part !== undefined);
      if (ctes.length === 0) return;
      await tx.$executeRaw`
        WITH rec_t AS MATERIALIZED (SELECT clock_timestamp() AS at), ${Prisma.join(ctes, ",")}
        SELECT 1`;
    },
  };
}

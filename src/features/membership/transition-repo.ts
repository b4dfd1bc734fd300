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
  /** One statement, the write's last: its answer is not read (sent with the COMMIT on PostgreSQL). */
  record(tx: SqlClient, workspaceId: string, entries: OutboxEntry[], sizes: SizeChange[]): Promise<void>;
  /**
   * The same parts as WITH items of the write's last membership statement (membership-sql.ts
   * changesOf's `closing`), whose `diff` (audience_id, chunk, entered, exited, new) and `counted`
   * (id, member_count) hold the changes it makes: each audience.members_changed entry among
   * `entries` stands for that statement's change of its audience (its member sets are not read),
   * and is recorded only if the audience changed. `fromDiff` false: the statement changes no
   * membership (and `entries` hold no such entry). Undefined when there is nothing to record.
   */
  inStatement(workspaceId: string, entries: OutboxEntry[], fromDiff: boolean): Prisma.Sql | undefined;
}

/**
 * The other features' parts of a write's closing statement, as common table expressions, passed
 * by the composition root (membership imports no feature): the outbox's (events' outbox-repo.ts)
 * and the size history's (insight's history-repo.ts), at the instant the statement gives them.
 * What they read of the write's membership changes is two relations the statement defines first:
 *
 * - `rec_chg` (ord, audience_id, reason, chunk, entered, exited, members): per chunk an
 *   audience.members_changed entry changed, `ord` the entry's index among the entries, who
 *   entered and who left (NULL: nobody), and the chunk's members as the write leaves them;
 * - `rec_siz` (audience_id, entered, exited, member_count): per audience, how many entered and
 *   left, and its size after the write.
 */
export interface WriteRecordParts {
  events(workspaceId: string, entries: OutboxEntry[]): Prisma.Sql | undefined;
  history(workspaceId: string, at: Prisma.Sql): Prisma.Sql;
}

const membersChanged = (entries: OutboxEntry[]) => entries.some((e) => e.type === "audience.members_changed");

/**
 * rec_chg and rec_siz of netted entries: who entered and left as they travel (chunkText's
 * positions or hex), the chunk's members read from membership_chunks (the statement comes after
 * the write's), the sizes from the audiences' member_count.
 */
function changesOfEntries(workspaceId: string, entries: OutboxEntry[], sizes: SizeChange[]): Prisma.Sql {
  const rows: { o: number; a: string; r: string; chunk: number; e: string; l: string }[] = [];
  entries.forEach((entry, o) => {
    if (entry.type !== "audience.members_changed") return;
    const chunks = new Set([...entry.entered.keys(), ...entry.left.keys()]);
    for (const chunk of [...chunks].sort((x, y) => x - y)) {
      const entered = entry.entered.get(chunk);
      const left = entry.left.get(chunk);
      rows.push({
        o,
        a: entry.audienceId,
        r: entry.reason,
        chunk,
        e: entered === undefined ? "" : chunkText(entered),
        l: left === undefined ? "" : chunkText(left),
      });
    }
  });
  const column = <K extends keyof (typeof rows)[number]>(key: K) => rows.map((row) => row[key]);
  const bits = (text: string) =>
    Prisma.sql`CASE WHEN ${Prisma.raw(text)} IN ('', 'p') THEN NULL ELSE ${bitsOfText(Prisma.raw(text))} END`;
  const at = { audience: Prisma.sql`v.a`, chunk: Prisma.sql`v.chunk::int` };
  const sizeColumns = {
    audience_id: sizes.map((c) => c.audienceId),
    entered: sizes.map((c) => c.entered),
    exited: sizes.map((c) => c.left),
  };
  return Prisma.sql`
    rec_chg AS MATERIALIZED (
      SELECT v.o::int AS ord, v.a AS audience_id, v.r AS reason, v.chunk::int AS chunk,
             ${bits("v.e")} AS entered, ${bits("v.l")} AS exited, coalesce(${storedBits("c")}, ${NO_BITS}) AS members
      FROM ${jsonRows("v", { o: column("o"), a: column("a"), r: column("r"), chunk: column("chunk"), e: column("e"), l: column("l") })}
      ${joinChunk("c", workspaceId, "member", at, readsByKey(rows.length))}
    ),
    rec_siz AS MATERIALIZED (
      SELECT a.id AS audience_id, v.entered::int AS entered, v.exited::int AS exited, a.member_count
      FROM ${jsonRows("v", sizeColumns)}
      JOIN audiences AS a ON a.workspace_id = ${workspaceId} AND a.id = v.audience_id
    )`;
}

/**
 * rec_chg and rec_siz of the statement the parts ride in: its `diff`, each audience under the
 * reason and at the place of its entry, and its `counted` sizes.
 */
function changesOfStatement(entries: OutboxEntry[]): Prisma.Sql {
  const moving = entries.flatMap((entry, o) =>
    entry.type === "audience.members_changed" ? [{ o, a: entry.audienceId, r: entry.reason }] : [],
  );
  return Prisma.sql`
    rec_mv AS (
      SELECT v.o::int AS ord, v.a, v.r FROM ${jsonRows("v", { o: moving.map((m) => m.o), a: moving.map((m) => m.a), r: moving.map((m) => m.r) })}
    ),
    rec_chg AS MATERIALIZED (
      SELECT v.ord, x.audience_id, v.r AS reason, x.chunk, nullif(x.entered, ${NO_BITS}) AS entered,
             nullif(x.exited, ${NO_BITS}) AS exited, coalesce(x.new, ${NO_BITS}) AS members
      FROM diff AS x JOIN rec_mv AS v ON v.a = x.audience_id
    ),
    rec_siz AS MATERIALIZED (
      SELECT x.audience_id, sum(bit_count(x.entered))::int AS entered, sum(bit_count(x.exited))::int AS exited, c.member_count
      FROM diff AS x JOIN counted AS c ON c.id = x.audience_id
      GROUP BY x.audience_id, c.member_count
    )`;
}

/**
 * The membership record's rows of rec_chg (named rec_ins), at rec_t's instant: one row per
 * audience, reason and chunk the write changed, who entered, who left, and the chunk's members
 * as the write leaves them: a million members moved by a rule are ~123 rows, not a million. The
 * instant is the statement's clock, kept to the microsecond so that two writes never share one. A
 * write holds the rows of the audiences it changed until it commits, so for one audience a later
 * write's instant is never earlier (were two equal, the rows merge, the later's members standing).
 */
const recordSql = (workspaceId: string) => Prisma.sql`
  rec_ins AS (
    INSERT INTO membership_record AS x (workspace_id, audience_id, chunk, at, reason, entered, exited, members)
    SELECT ${workspaceId}, c.audience_id, c.chunk, t.at, c.reason, c.entered, c.exited, c.members
    FROM rec_chg AS c CROSS JOIN rec_t AS t
    ON CONFLICT (workspace_id, audience_id, chunk, at, reason) DO UPDATE SET
      entered = nullif((coalesce(x.entered, ${NO_BITS}) & ~coalesce(EXCLUDED.exited, ${NO_BITS})) | coalesce(EXCLUDED.entered, ${NO_BITS}), ${NO_BITS}),
      exited = nullif((coalesce(x.exited, ${NO_BITS}) & ~coalesce(EXCLUDED.entered, ${NO_BITS})) | coalesce(EXCLUDED.exited, ${NO_BITS}), ${NO_BITS}),
      members = EXCLUDED.members
  )`;

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
 * audiences' member_count), which one statement's snapshot sees. A write whose last statement
 * moves its audiences can carry them there instead (inStatement): they read that statement's
 * changes rather than the tables, which its parts do not see written.
 */
export function writeRecords(parts: WriteRecordParts): WriteRecords {
  const ctes = (workspaceId: string, entries: OutboxEntry[], changes: Prisma.Sql | undefined) =>
    [
      changes,
      parts.events(workspaceId, entries),
      changes && recordSql(workspaceId),
      changes && parts.history(workspaceId, Prisma.sql`(SELECT at FROM rec_t)`),
    ].filter((part): part is Prisma.Sql => part !== undefined);
  return {
    async record(tx, workspaceId, entries, sizes) {
      const changes = membersChanged(entries) ? changesOfEntries(workspaceId, entries, sizes) : undefined;
      const list = ctes(workspaceId, entries, changes);
      if (list.length === 0) return;
      await tx.$executeRaw`
        WITH rec_t AS MATERIALIZED (SELECT clock_timestamp() AS at), ${Prisma.join(list, ",")}
        SELECT 1`;
    },
    inStatement(workspaceId, entries, fromDiff) {
      const changes = fromDiff && membersChanged(entries) ? changesOfStatement(entries) : undefined;
      const list = ctes(workspaceId, entries, changes);
      if (list.length === 0) return undefined;
      // The instant once the statement has its diff, whose evaluation takes the audiences' locks.
      const at = changes
        ? Prisma.sql`rec_t AS MATERIALIZED (SELECT clock_timestamp() AS at FROM (SELECT count(*) FROM diff) AS n)`
        : Prisma.sql`rec_t AS MATERIALIZED (SELECT clock_timestamp() AS at)`;
      return Prisma.sql`${at}, ${Prisma.join(list, ",")}`;
    },
  };
}

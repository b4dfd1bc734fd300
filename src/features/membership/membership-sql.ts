import { Prisma } from "../../../generated/prisma/client.ts";
import { committing, type SqlClient } from "../../platform/db/sql-client.ts";
import {
  base64Of,
  CHUNK_SHIFT,
  chunkBytes,
  kind,
  knownChunksOf,
  knownGroupedChunksOf,
  NO_BITS,
  type SetKind,
  storedBits,
  storedDiffer,
  takeStored,
} from "./member-bits-sql.ts";
import { byIds } from "./member-repo.ts";
import type { MemberSet } from "./member-set.ts";

// The pieces every membership statement (membership-repo.ts) is made of.

/** What one statement did to one audience's members: who entered and who left, by member number. */
export interface SetChange {
  audienceId: string;
  entered: MemberSet;
  left: MemberSet;
}

/**
 * The write's closing statement's parts (its events, record and size history), to ride in its
 * last membership statement instead of a statement of their own: a round trip less
 * (membership-writer.ts `closing`).
 */
export interface WriteClosing {
  /**
   * The parts as WITH items. `diff`: they ride in changesOf's statement, whose `diff` and
   * `counted` they read; otherwise in a statement that moves nobody. Undefined: nothing to record.
   */
  sql(into: "diff" | "nothing"): Prisma.Sql | undefined;
  /** Told once the statement that carries them has run, with its changes: they are recorded. */
  sent(changes: SetChange[]): void;
}

/**
 * Runs a membership statement and reads back what it changed. `statement` is a WITH list, one of
 * whose queries, `d`, holds (audience_id, chunk, old, new): each touched chunk's member bits
 * before and after (NULL: no such chunk). The end appended here works out who entered and who
 * left, moves each audience's member_count by the difference (and its updated_at, also when one
 * member entered as another left), and returns the changed chunks,
 * audience by audience in id order (so events of one write come in a stable order).
 *
 * With `closing`, the statement is the write's last and carries its closing parts, which read its
 * changes: it commits the transaction (committing), and what it returns is recorded already.
 */
export async function changesOf(
  tx: SqlClient,
  workspaceId: string,
  statement: Prisma.Sql,
  closing?: WriteClosing,
): Promise<SetChange[]> {
  const end = Prisma.sql`
    diff AS MATERIALIZED (
      SELECT d.audience_id, d.chunk, d.new,
             coalesce(d.new, ${NO_BITS}) & ~coalesce(d.old, ${NO_BITS}) AS entered,
             coalesce(d.old, ${NO_BITS}) & ~coalesce(d.new, ${NO_BITS}) AS exited
      FROM d WHERE coalesce(d.old, ${NO_BITS}) <> coalesce(d.new, ${NO_BITS})
    ),
    counted AS (
      UPDATE audiences AS a SET member_count = a.member_count + s.delta, updated_at = now()
      FROM (SELECT audience_id, sum(bit_count(entered) - bit_count(exited))::int AS delta FROM diff GROUP BY audience_id) AS s
      WHERE a.workspace_id = ${workspaceId} AND a.id = s.audience_id
      RETURNING a.id, a.member_count
    )`;
  const parts = closing?.sql("diff");
  // Ids in the order of their characters (as the process sorts them), whatever the database's collation.
  const rows = await (closing ? committing(tx) : tx).$queryRaw<
    { audienceId: string; chunk: number; entered: string | null; left: string | null }[]
  >`
    ${statement}, ${end}${parts ? Prisma.sql`, ${parts}` : Prisma.empty}
    SELECT audience_id AS "audienceId", chunk,
           CASE WHEN entered <> ${NO_BITS} THEN ${base64Of(Prisma.sql`entered`)} END AS entered,
           CASE WHEN exited <> ${NO_BITS} THEN ${base64Of(Prisma.sql`exited`)} END AS "left"
    FROM diff ORDER BY audience_id COLLATE "C", chunk`;
  const changes = new Map<
    string,
    { audienceId: string; entered: Map<number, Uint8Array>; left: Map<number, Uint8Array> }
  >();
  for (const row of rows) {
    let change = changes.get(row.audienceId);
    if (!change) {
      change = { audienceId: row.audienceId, entered: new Map(), left: new Map() };
      changes.set(row.audienceId, change);
    }
    if (row.entered !== null) change.entered.set(row.chunk, chunkBytes(row.entered));
    if (row.left !== null) change.left.set(row.chunk, chunkBytes(row.left));
  }
  const setChanges = [...changes.values()];
  closing?.sent(setChanges);
  return setChanges;
}

export interface Target {
  workspaceId: string;
  audienceId: string;
}

/** The member numbers of these ids (unknown ids have none). */
export const seqsOf = (workspaceId: string, memberIds: string[]) =>
  Prisma.sql`SELECT m.seq FROM ${byIds(workspaceId, memberIds)}`;

/** The target's row of a kind for the chunk aliased t (join condition). */
export const chunkRow = ({ workspaceId, audienceId }: Target, k: SetKind) =>
  Prisma.sql`t.workspace_id = ${workspaceId} AND t.audience_id = ${audienceId} AND t.kind = ${kind(k)}`;

// Chunks are written as whole bits; the table's trigger stores few members as positions and
// sets the count (member-bits-sql.ts storedBits).

/** Sets the bits of p in the target's set of a kind (writing only chunks that change). */
export const setBits = ({ workspaceId, audienceId }: Target, k: SetKind) => Prisma.sql`
  INSERT INTO membership_chunks AS t (workspace_id, audience_id, kind, chunk, bits)
  SELECT ${workspaceId}, ${audienceId}, ${kind(k)}, p.chunk, p.bits FROM p
  ON CONFLICT (workspace_id, audience_id, kind, chunk) DO UPDATE
  SET bits = ${storedBits("t")} | ${storedBits("EXCLUDED")}
  WHERE (${storedBits("EXCLUDED")} & ~${storedBits("t")}) <> ${NO_BITS}`;

/** Clears the bits of p in the target's set of a kind. */
export const clearBits = (target: Target, k: SetKind) => Prisma.sql`
  UPDATE membership_chunks AS t SET bits = ${storedBits("t")} & ~p.bits FROM p
  WHERE ${chunkRow(target, k)} AND t.chunk = p.chunk AND (${storedBits("t")} & p.bits) <> ${NO_BITS}`;

/** Deletes the target's chunks of a kind that `keep` (a query of chunk numbers) does not list. */
export const dropChunksOutside = (target: Target, k: SetKind, keep: Prisma.Sql) => Prisma.sql`
  DELETE FROM membership_chunks AS t WHERE ${chunkRow(target, k)} AND t.chunk NOT IN (${keep})`;

/** Writes `chunks` (a query of chunk, bits) as the target's chunks of a kind. */
export const replaceChunks = ({ workspaceId, audienceId }: Target, k: SetKind, chunks: Prisma.Sql) => Prisma.sql`
  INSERT INTO membership_chunks AS t (workspace_id, audience_id, kind, chunk, bits)
  SELECT ${workspaceId}, ${audienceId}, ${kind(k)}, c.chunk, c.bits FROM (${chunks}) AS c
  ON CONFLICT (workspace_id, audience_id, kind, chunk) DO UPDATE
  SET ${takeStored} WHERE ${storedDiffer("t", "EXCLUDED")}`;

/** Writes the rows of a CTE (audience_id, chunk, old, bits) whose bits changed, as chunks of a kind. */
export const upsertChanged = (workspaceId: string, k: SetKind, cte: string) => Prisma.sql`
  INSERT INTO membership_chunks AS t (workspace_id, audience_id, kind, chunk, bits)
  SELECT ${workspaceId}, x.audience_id, ${kind(k)}, x.chunk, x.bits FROM ${Prisma.raw(cte)} AS x
  WHERE coalesce(x.old, ${NO_BITS}) <> x.bits
  ON CONFLICT (workspace_id, audience_id, kind, chunk) DO UPDATE SET ${takeStored}`;

/**
 * Whether a statement whose rows fall in `chunks` chunks reads the audiences' chunks by key (see
 * joinChunk). Past a few chunks, one hash of the workspace's chunks of a kind costs less than a
 * probe per (audience, chunk).
 */
export const readsByKey = (chunks: number) => chunks <= 4;

/**
 * LEFT JOINs the stored chunk of a kind at (audience, chunk) as `alias` (read it with storedBits
 * or storedHas; NULL where there is none). `byKey` probes one chunk row per row: through the primary key, or through the index by
 * chunk number, which ends with the audience so that it is as exact (without statistics the
 * planner may take either; test/store/chunk-probe-plan.test.ts). Otherwise the planner, which has no
 * statistics for these rows, hashes every chunk of that kind in the workspace, for a write that
 * touches one chunk of a few audiences. OFFSET
 * 0 keeps it from flattening the probe back into that join.
 */
export function joinChunk(
  alias: string,
  workspaceId: string,
  k: SetKind,
  at: { audience: Prisma.Sql; chunk: Prisma.Sql },
  byKey: boolean,
): Prisma.Sql {
  const t = Prisma.raw(alias);
  return byKey
    ? Prisma.sql`LEFT JOIN LATERAL (
        SELECT c.bits, c.seqs FROM membership_chunks AS c
        WHERE c.workspace_id = ${workspaceId} AND c.audience_id = ${at.audience} AND c.kind = ${kind(k)}
          AND c.chunk = ${at.chunk} OFFSET 0
      ) AS ${t} ON true`
    : Prisma.sql`LEFT JOIN membership_chunks AS ${t} ON ${t}.workspace_id = ${workspaceId}
        AND ${t}.audience_id = ${at.audience} AND ${t}.kind = ${kind(k)} AND ${t}.chunk = ${at.chunk}`;
}

/**
 * applyMatches' rows (audience_id, chunk, changed): the chunks of the members each audience
 * evaluated, shared or its own, and how many there are; undefined when there are none.
 */
export function evaluatedChunks(
  changed: number[] | "own",
  matched: { audienceId: string; among?: number[] }[],
): { rows: Prisma.Sql; count: number } | undefined {
  const chunksOf = (seqs: number[]) => new Set(seqs.map((seq) => seq >> CHUNK_SHIFT)).size;
  if (changed !== "own") {
    if (changed.length === 0 || matched.length === 0) return undefined;
    return {
      rows: Prisma.sql`SELECT a.id AS audience_id, c.chunk, c.bits AS changed
        FROM unnest(${matched.map((m) => m.audienceId)}::text[]) AS a(id) CROSS JOIN ${knownChunksOf(changed)} AS c`,
      count: chunksOf(changed),
    };
  }
  const domains = matched.flatMap(({ audienceId, among = [] }) =>
    among.length > 0 ? [{ grp: audienceId, seqs: among }] : [],
  );
  if (domains.length === 0) return undefined;
  return {
    rows: Prisma.sql`SELECT c.grp AS audience_id, c.chunk, c.bits AS changed FROM ${knownGroupedChunksOf(domains)} AS c`,
    count: domains.reduce((n, d) => n + chunksOf(d.seqs), 0),
  };
}

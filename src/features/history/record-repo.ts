import { Prisma } from "../../../generated/prisma/client.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";
import { CHUNK_SHIFT, NO_BITS, pageSeqs } from "../membership/member-bits-sql.ts";
import type { MemberRow } from "../membership/member-repo.ts";
import { chunksAtSql } from "../membership/transition-repo.ts";
import { anyBehindIn, BIT, latestBefore, memberOf, SHIFT } from "./record-sql.ts";

/** A member as an earlier instant's page lists it: as it is now, or as its deletion left it. */
export interface RecordedMemberRow extends MemberRow {
  seq: number;
  deletedAt: Date | null;
}

export interface AsOfPage {
  /** The workspace's record start, undefined when the workspace has no such audience. */
  since: Date | undefined;
  total: number;
  rows: RecordedMemberRow[];
  /** Whether members lie beyond the page in the direction walked, and behind the cursor. */
  more: boolean;
  behind: boolean;
}

export interface ChangeRow {
  seq: number;
  memberId: string;
  entered: boolean;
  reason: string;
  at: Date;
}

export interface ChangeCounts {
  entered: number;
  left: number;
}

/**
 * Reads of the membership record (membership_record, written by membership's transition-repo.ts
 * in every membership write) and its compaction. The members at an instant are, chunk by chunk,
 * the members of the chunk's latest row before it; who came and went in a span, the difference
 * between those at its two ends, chunk by chunk, in the chunks the span's rows touched.
 */
export const recordRepo = {
  /** The workspace's record start, undefined when the workspace has no such audience. */
  async since(db: SqlClient, workspaceId: string, audienceId: string): Promise<Date | undefined> {
    const [row] = await db.$queryRaw<{ since: Date }[]>`
      SELECT w.membership_record_since AS since FROM workspaces AS w
      JOIN audiences AS a ON a.workspace_id = w.workspace_id
      WHERE w.workspace_id = ${workspaceId} AND a.id = ${audienceId}`;
    return row?.since;
  },

  /**
   * One keyset page (by member number, that is by (createdAt, id)) of the audience's members at
   * an instant, with their exact count and the workspace's record start, in one statement.
   */
  async pageAsOf(
    db: SqlClient,
    workspaceId: string,
    audienceId: string,
    query: { before: Date; ascending: boolean; limit: number; cursor?: number | undefined },
  ): Promise<AsOfPage> {
    const { ascending, cursor } = query;
    const behind =
      cursor === undefined
        ? Prisma.sql`false`
        : Prisma.sql`(EXISTS (SELECT 1 FROM c WHERE c.chunk ${ascending ? Prisma.sql`<` : Prisma.sql`>`} ${cursor >> CHUNK_SHIFT})
            OR EXISTS (SELECT 1 FROM c WHERE c.chunk = ${cursor >> CHUNK_SHIFT} AND ${anyBehindIn(Prisma.sql`c.bits`, ascending, cursor)}))`;
    const order = ascending ? Prisma.sql`ASC` : Prisma.sql`DESC`;
    const [head] = await db.$queryRaw<{ since: Date | null; total: number; behind: boolean; page: string }[]>`
      WITH c AS MATERIALIZED (
        SELECT s.chunk, s.bits, bit_count(s.bits)::int AS n FROM (${chunksAtSql(workspaceId, audienceId, query.before)}) AS s
      ),
      ${pageSeqs("c", ascending, query.limit, cursor)}
      SELECT
        (SELECT w.membership_record_since FROM workspaces AS w JOIN audiences AS a ON a.workspace_id = w.workspace_id
          WHERE w.workspace_id = ${workspaceId} AND a.id = ${audienceId}) AS since,
        (SELECT coalesce(sum(c.n), 0)::int FROM c) AS total,
        ${behind} AS behind,
        coalesce((
          SELECT json_agg(json_build_object(
            'seq', p.seq, 'id', coalesce(m.id, d.id), 'createdAt', coalesce(m.created_at, d.created_at),
            'email', m.email, 'fields', coalesce(m.fields, '{}'::jsonb),
            'alternativeEmails', coalesce(m.alternative_emails, '{}'::text[]), 'deletedAt', d.deleted_at
          ) ORDER BY p.seq ${order})
          FROM p ${memberOf(workspaceId, Prisma.sql`p.seq`)}
        ), '[]')::text AS page`;
    const rows = (
      JSON.parse(head?.page ?? "[]") as (Omit<RecordedMemberRow, "createdAt" | "deletedAt"> & {
        createdAt: string;
        deletedAt: string | null;
      })[]
    ).map((row) => ({
      ...row,
      createdAt: new Date(row.createdAt),
      deletedAt: row.deletedAt === null ? null : new Date(row.deletedAt),
    }));
    return {
      since: head?.since ?? undefined,
      total: head?.total ?? 0,
      rows: rows.slice(0, query.limit),
      more: rows.length > query.limit,
      behind: head?.behind ?? false,
    };
  },

  /**
   * The members whose state differs between two instants (rows in [from, to), both a millisecond
   * after the instants asked for; from at the record's start at the earliest), one keyset page by
   * member number after `cursor`, each with its last transition in the span; with the span's exact
   * net counts and moves, and the workspace's record start (undefined when it has no such audience).
   */
  async changes(
    db: SqlClient,
    workspaceId: string,
    audienceId: string,
    span: { from: Date; to: Date; limit: number; cursor?: number | undefined },
  ): Promise<{ since: Date | undefined; counts: ChangeCounts; moves: ChangeCounts; rows: ChangeRow[]; more: boolean }> {
    const aud = Prisma.sql`${audienceId}`;
    const [head] = await db.$queryRaw<
      { since: Date | null; entered: number; exited: number; moved_in: number; moved_out: number; page: string }[]
    >`
      WITH lo AS MATERIALIZED (
        -- Never before the record's start: an upgrade's baseline, written at it, is not a change.
        SELECT greatest(${span.from}::timestamptz, w.membership_record_since + interval '1 millisecond') AS at
        FROM workspaces AS w WHERE w.workspace_id = ${workspaceId}
      ),
      span AS MATERIALIZED (
        SELECT r.chunk, bit_count(coalesce(r.entered, ${NO_BITS}))::int AS moved_in,
          bit_count(coalesce(r.exited, ${NO_BITS}))::int AS moved_out
        FROM membership_record AS r, lo
        WHERE r.workspace_id = ${workspaceId} AND r.audience_id = ${audienceId}
          AND r.at >= lo.at AND r.at < ${span.to}::timestamptz
      ),
      n AS MATERIALIZED (
        SELECT k.chunk, coalesce(a.members, ${NO_BITS}) AS now, coalesce(b.members, ${NO_BITS}) AS was
        FROM (SELECT DISTINCT span.chunk FROM span) AS k
        CROSS JOIN LATERAL (${latestBefore(workspaceId, aud, Prisma.sql`k.chunk`, Prisma.sql`${span.to}::timestamptz`)} ORDER BY r.at DESC LIMIT 1) AS a
        LEFT JOIN LATERAL (${latestBefore(workspaceId, aud, Prisma.sql`k.chunk`, Prisma.sql`(SELECT at FROM lo)`)} ORDER BY r.at DESC LIMIT 1) AS b ON true
      ),
      c AS MATERIALIZED (
        SELECT n.chunk, n.now # n.was AS bits, bit_count(n.now & ~n.was)::int AS ins, bit_count(n.was & ~n.now)::int AS outs,
          bit_count(n.now # n.was)::int AS n, n.now
        FROM n WHERE n.now <> n.was
      ),
      ${pageSeqs("c", true, span.limit, span.cursor)}
      SELECT
        (SELECT w.membership_record_since FROM workspaces AS w JOIN audiences AS a ON a.workspace_id = w.workspace_id
          WHERE w.workspace_id = ${workspaceId} AND a.id = ${audienceId}) AS since,
        (SELECT coalesce(sum(c.ins), 0)::int FROM c) AS entered,
        (SELECT coalesce(sum(c.outs), 0)::int FROM c) AS exited,
        (SELECT coalesce(sum(span.moved_in), 0)::int FROM span) AS moved_in,
        (SELECT coalesce(sum(span.moved_out), 0)::int FROM span) AS moved_out,
        coalesce((
          SELECT json_agg(json_build_object(
            'seq', p.seq, 'memberId', coalesce(m.id, d.id),
            'entered', get_bit((SELECT c.now FROM c WHERE c.chunk = p.seq >> ${SHIFT}), p.seq & ${BIT}) = 1,
            'reason', l.reason, 'at', to_char(l.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
          ) ORDER BY p.seq)
          FROM p
          CROSS JOIN LATERAL (
            SELECT r.reason, r.at FROM membership_record AS r
            WHERE r.workspace_id = ${workspaceId} AND r.audience_id = ${audienceId} AND r.chunk = p.seq >> ${SHIFT}
              AND r.at >= (SELECT at FROM lo) AND r.at < ${span.to}::timestamptz
              AND get_bit(coalesce(r.entered, ${NO_BITS}) | coalesce(r.exited, ${NO_BITS}), p.seq & ${BIT}) = 1
            ORDER BY r.at DESC LIMIT 1
          ) AS l
          ${memberOf(workspaceId, Prisma.sql`p.seq`)}
        ), '[]')::text AS page`;
    const rows = (JSON.parse(head?.page ?? "[]") as (Omit<ChangeRow, "at"> & { at: string })[]).map((row) => ({
      ...row,
      at: new Date(row.at),
    }));
    return {
      since: head?.since ?? undefined,
      counts: { entered: head?.entered ?? 0, left: head?.exited ?? 0 },
      moves: { entered: head?.moved_in ?? 0, left: head?.moved_out ?? 0 },
      rows: rows.slice(0, span.limit),
      more: rows.length > span.limit,
    };
  },

  /**
   * The audiences one member was in at an instant (exclusive bound, as pageAsOf), newest audience
   * first, with the last entry's reason and instant; the member is the one that held the id then
   * (created before the instant, deleted after it, if at all). `since` undefined: no such member.
   */
  async memberAudiencesAsOf(
    db: SqlClient,
    workspaceId: string,
    memberId: string,
    before: Date,
  ): Promise<{
    since: Date | undefined;
    found: boolean;
    rows: { id: string; name: string; isArchived: boolean; reason: string; at: Date }[];
  }> {
    const bound = Prisma.sql`${before}::timestamptz`;
    const chunk = Prisma.sql`who.seq >> ${SHIFT}`;
    const [head] = await db.$queryRaw<{ since: Date | null; seq: number | null; page: string }[]>`
      WITH who AS MATERIALIZED (
        SELECT seq FROM (
          SELECT m.seq, m.created_at FROM members AS m WHERE m.workspace_id = ${workspaceId} AND m.id = ${memberId}
          UNION ALL
          SELECT d.seq, d.created_at FROM deleted_members AS d
          WHERE d.workspace_id = ${workspaceId} AND d.id = ${memberId} AND d.deleted_at >= ${before}::timestamptz
        ) AS c WHERE c.created_at < ${before}::timestamptz ORDER BY c.created_at DESC LIMIT 1
      )
      SELECT
        (SELECT membership_record_since FROM workspaces WHERE workspace_id = ${workspaceId}) AS since,
        (SELECT seq FROM who) AS seq,
        coalesce((
          SELECT json_agg(json_build_object(
            'id', a.id, 'name', a.name, 'isArchived', a.is_archived, 'reason', e.reason,
            'at', to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
          ) ORDER BY a.created_at DESC, a.id DESC)
          FROM who CROSS JOIN audiences AS a
          CROSS JOIN LATERAL (${latestBefore(workspaceId, Prisma.sql`a.id`, chunk, bound)} ORDER BY r.at DESC LIMIT 1) AS s
          CROSS JOIN LATERAL (
            ${latestBefore(workspaceId, Prisma.sql`a.id`, chunk, bound)}
              AND get_bit(coalesce(r.entered, ${NO_BITS}), who.seq & ${BIT}) = 1
            ORDER BY r.at DESC LIMIT 1
          ) AS e
          WHERE a.workspace_id = ${workspaceId} AND get_bit(coalesce(s.members, ${NO_BITS}), who.seq & ${BIT}) = 1
        ), '[]')::text AS page`;
    const rows = (
      JSON.parse(head?.page ?? "[]") as { id: string; name: string; isArchived: boolean; reason: string; at: string }[]
    ).map((row) => ({ ...row, at: new Date(row.at) }));
    return { since: head?.since ?? undefined, found: head?.seq !== null && head?.seq !== undefined, rows };
  },

  /**
   * Compacts the record to the horizon, across workspaces. Of each chunk's rows before `cutoff`,
   * keeps the last (its members are the chunk's at the horizon, which any later instant reads)
   * and, of the others, only the entries of members still in at the cutoff (no later row of the
   * chunk moved them before it: a member's audiences at a later instant tell when it entered);
   * forgets the members deleted before the cutoff (no later instant lists them). Chunk by chunk
   * through the key's (workspace, audience, at) index, not a scan of the whole record. Returns
   * how many rows it deleted.
   *
   * `from`: only the chunks with a row since then are compacted. What an earlier pass compacted
   * is compacted already, so a pass needs to look only at the chunks written since the previous
   * cutoff; rows left over by a pass skipped (the server stopped for longer) cost space, never an
   * answer, since no instant before the cutoff is read.
   */
  async compactBefore(db: SqlClient, cutoff: Date, from?: Date): Promise<number> {
    const since = from === undefined ? Prisma.sql`true` : Prisma.sql`r.at >= ${from}::timestamptz`;
    const flips = Prisma.sql`coalesce(r.entered, ${NO_BITS}) | coalesce(r.exited, ${NO_BITS})`;
    const same = Prisma.sql`r.workspace_id = x.workspace_id AND r.audience_id = x.audience_id AND r.chunk = x.chunk
      AND r.at = x.at AND r.reason = x.reason`;
    const [row] = await db.$queryRaw<{ gone: number }[]>`
      WITH k AS (
        SELECT DISTINCT r.workspace_id, r.audience_id, r.chunk
        FROM audiences AS a
        JOIN membership_record AS r ON r.workspace_id = a.workspace_id AND r.audience_id = a.id
        WHERE ${since} AND r.at < ${cutoff}::timestamptz
      ),
      x AS MATERIALIZED (
        SELECT r.workspace_id, r.audience_id, r.chunk, r.at, r.reason, r.entered, r.exited,
          r.members IS NOT NULL AS snapshot, row_number() OVER w AS k,
          nullif(coalesce(r.entered, ${NO_BITS}) & ~coalesce(bit_or(${flips}) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), ${NO_BITS}), ${NO_BITS}) AS standing
        FROM membership_record AS r JOIN k USING (workspace_id, audience_id, chunk)
        WHERE r.at < ${cutoff}::timestamptz
        WINDOW w AS (PARTITION BY r.workspace_id, r.audience_id, r.chunk ORDER BY r.at DESC, r.reason DESC)
      ),
      gone AS (
        DELETE FROM membership_record AS r USING x WHERE ${same} AND x.k > 1 AND x.standing IS NULL RETURNING 1
      ),
      kept AS (
        UPDATE membership_record AS r SET entered = x.standing, exited = NULL, members = CASE WHEN x.k = 1 THEN r.members END
        FROM x WHERE ${same} AND (x.k = 1 OR x.standing IS NOT NULL)
          AND (x.exited IS NOT NULL OR x.entered IS DISTINCT FROM x.standing OR (x.k > 1 AND x.snapshot))
        RETURNING 1
      )
      SELECT (SELECT count(*) FROM gone)::int + (SELECT 0 * count(*) FROM kept)::int AS gone`;
    const deleted = await db.$executeRaw`DELETE FROM deleted_members WHERE deleted_at < ${cutoff}::timestamptz`;
    return (row?.gone ?? 0) + deleted;
  },
};

export type RecordRepo = typeof recordRepo;

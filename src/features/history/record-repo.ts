import { Prisma } from "../../../generated/prisma/client.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";
import type { MemberRow } from "../membership/member-repo.ts";
import { membersAtSql } from "../membership/transition-repo.ts";

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

/** The member's row by number: the member, or the record of its deletion. */
const memberOf = (workspaceId: string, seq: Prisma.Sql) => Prisma.sql`
  LEFT JOIN members AS m ON m.workspace_id = ${workspaceId} AND m.seq = ${seq}
  LEFT JOIN deleted_members AS d ON d.workspace_id = ${workspaceId} AND d.seq = ${seq} AND m.id IS NULL`;

/**
 * Reads of the membership record (membership_transitions, written by membership's
 * transition-repo.ts in every membership write) and its purge.
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
    const beyond =
      cursor === undefined
        ? Prisma.sql`true`
        : ascending
          ? Prisma.sql`i.seq > ${cursor}`
          : Prisma.sql`i.seq < ${cursor}`;
    const behind =
      cursor === undefined
        ? Prisma.sql`false`
        : Prisma.sql`EXISTS (SELECT 1 FROM i WHERE ${ascending ? Prisma.sql`i.seq <= ${cursor}` : Prisma.sql`i.seq >= ${cursor}`})`;
    const order = ascending ? Prisma.sql`ASC` : Prisma.sql`DESC`;
    const [head] = await db.$queryRaw<{ since: Date | null; total: number; behind: boolean; page: string }[]>`
      WITH i AS MATERIALIZED (${membersAtSql(workspaceId, audienceId, query.before)}),
      p AS (SELECT i.seq FROM i WHERE ${beyond} ORDER BY i.seq ${order} LIMIT ${query.limit + 1})
      SELECT
        (SELECT w.membership_record_since FROM workspaces AS w JOIN audiences AS a ON a.workspace_id = w.workspace_id
          WHERE w.workspace_id = ${workspaceId} AND a.id = ${audienceId}) AS since,
        (SELECT count(*)::int FROM i) AS total,
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
   * The members whose state differs between two instants (transitions in [from, to), both a
   * millisecond after the instants asked for; from at the record's start at the earliest), one keyset page by member number after `cursor`,
   * each with its last transition in the span; with the span's exact net counts and moves, and
   * the workspace's record start (undefined when it has no such audience).
   */
  async changes(
    db: SqlClient,
    workspaceId: string,
    audienceId: string,
    span: { from: Date; to: Date; limit: number; cursor?: number | undefined },
  ): Promise<{ since: Date | undefined; counts: ChangeCounts; moves: ChangeCounts; rows: ChangeRow[]; more: boolean }> {
    const after = span.cursor === undefined ? Prisma.sql`true` : Prisma.sql`n.seq > ${span.cursor}`;
    const [head] = await db.$queryRaw<
      { since: Date | null; entered: number; exited: number; moved_in: number; moved_out: number; page: string }[]
    >`
      WITH lo AS MATERIALIZED (
        -- Never before the record's start: an upgrade's baseline, written at it, is not a change.
        SELECT greatest(${span.from}::timestamptz, w.membership_record_since + interval '1 millisecond') AS at
        FROM workspaces AS w WHERE w.workspace_id = ${workspaceId}
      ),
      span AS MATERIALIZED (
        SELECT t.seq, t.at, t.entered, t.reason FROM membership_transitions AS t, lo
        WHERE t.workspace_id = ${workspaceId} AND t.audience_id = ${audienceId}
          AND t.at >= lo.at AND t.at < ${span.to}::timestamptz
      ),
      last AS (SELECT DISTINCT ON (seq) seq, at, entered, reason FROM span ORDER BY seq, at DESC),
      n AS MATERIALIZED (
        SELECT last.* FROM last
        WHERE last.entered IS DISTINCT FROM coalesce((
          SELECT b.entered FROM membership_transitions AS b
          WHERE b.workspace_id = ${workspaceId} AND b.audience_id = ${audienceId} AND b.seq = last.seq
            AND b.at < (SELECT at FROM lo)
          ORDER BY b.at DESC LIMIT 1
        ), false)
      ),
      p AS (SELECT n.* FROM n WHERE ${after} ORDER BY n.seq LIMIT ${span.limit + 1})
      SELECT
        (SELECT w.membership_record_since FROM workspaces AS w JOIN audiences AS a ON a.workspace_id = w.workspace_id
          WHERE w.workspace_id = ${workspaceId} AND a.id = ${audienceId}) AS since,
        (SELECT count(*) FILTER (WHERE entered)::int FROM n) AS entered,
        (SELECT count(*) FILTER (WHERE NOT entered)::int FROM n) AS exited,
        (SELECT count(*) FILTER (WHERE entered)::int FROM span) AS moved_in,
        (SELECT count(*) FILTER (WHERE NOT entered)::int FROM span) AS moved_out,
        coalesce((
          SELECT json_agg(json_build_object(
            'seq', p.seq, 'memberId', coalesce(m.id, d.id), 'entered', p.entered, 'reason', p.reason,
            'at', to_char(p.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
          ) ORDER BY p.seq)
          FROM p ${memberOf(workspaceId, Prisma.sql`p.seq`)}
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
            'id', a.id, 'name', a.name, 'isArchived', a.is_archived, 'reason', s.reason,
            'at', to_char(s.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
          ) ORDER BY a.created_at DESC, a.id DESC)
          FROM (
            SELECT DISTINCT ON (t.audience_id) t.audience_id, t.entered, t.reason, t.at
            FROM membership_transitions AS t, who
            WHERE t.workspace_id = ${workspaceId} AND t.seq = who.seq AND t.at < ${before}::timestamptz
            ORDER BY t.audience_id, t.at DESC
          ) AS s
          JOIN audiences AS a ON a.workspace_id = ${workspaceId} AND a.id = s.audience_id
          WHERE s.entered
        ), '[]')::text AS page`;
    const rows = (
      JSON.parse(head?.page ?? "[]") as { id: string; name: string; isArchived: boolean; reason: string; at: string }[]
    ).map((row) => ({ ...row, at: new Date(row.at) }));
    return { since: head?.since ?? undefined, found: head?.seq !== null && head?.seq !== undefined, rows };
  },

  /**
   * Compacts the record to the horizon, across workspaces: of the transitions before `cutoff`,
   * keeps only each member's last one in each audience, and only if it entered (the member was
   * still in at the horizon, and its state at any later instant needs it); forgets the members
   * deleted before the cutoff (no later instant lists them). Audience by audience through the
   * key's (workspace, audience, at) index, not a scan of the whole record.
   *
   * `from`: only the members with a transition since then are compacted. What an earlier pass
   * compacted holds one row per member before its cutoff, so a pass needs to look only at the
   * members that moved since the previous cutoff; rows left over by a pass skipped (the server
   * stopped for longer) cost space, never an answer, since no instant before the cutoff is read.
   */
  async compactBefore(db: SqlClient, cutoff: Date, from?: Date): Promise<number> {
    const since = from === undefined ? Prisma.sql`true` : Prisma.sql`r.at >= ${from}::timestamptz`;
    const transitions = await db.$executeRaw`
      DELETE FROM membership_transitions AS t
      USING (
        SELECT DISTINCT r.workspace_id, r.audience_id, r.seq
        FROM audiences AS a
        JOIN membership_transitions AS r ON r.workspace_id = a.workspace_id AND r.audience_id = a.id
        WHERE ${since} AND r.at < ${cutoff}::timestamptz
      ) AS m
      WHERE t.workspace_id = m.workspace_id AND t.audience_id = m.audience_id AND t.seq = m.seq
        AND t.at < ${cutoff}::timestamptz
        AND (NOT t.entered OR EXISTS (
          SELECT 1 FROM membership_transitions AS n
          WHERE n.workspace_id = t.workspace_id AND n.audience_id = t.audience_id AND n.seq = t.seq
            AND n.at > t.at AND n.at < ${cutoff}::timestamptz
        ))`;
    const deleted = await db.$executeRaw`DELETE FROM deleted_members WHERE deleted_at < ${cutoff}::timestamptz`;
    return transitions + deleted;
  },
};

export type RecordRepo = typeof recordRepo;

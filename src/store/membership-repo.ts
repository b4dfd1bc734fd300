import { Prisma, type PrismaClient } from "../../generated/prisma/client.ts";
import type { Position } from "../domain/cursor.ts";
import type { Tx } from "./database.ts";
import type { MemberRow } from "./member-repo.ts";

type Reader = PrismaClient | Tx;

export interface PageQuery {
  sortDirection: "ASC" | "DESC";
  limit: number;
  after?: Position | undefined;
  before?: Position | undefined;
  search?: string | undefined;
}

export interface PageRows {
  rows: MemberRow[];
  hasNextPage: boolean;
  hasPreviousPage: boolean;
}

/**
 * The audience_entries (manual include/exclude) and audience_members (materialized membership)
 * tables. Writers hold the audience row lock (audienceRepo.lock) and keep member_count in step.
 */
export const membershipRepo = {
  /** Writes include entries and makes the members part of the audience; returns how many joined. */
  async include(tx: Tx, workspaceId: string, audienceId: string, memberIds: string[]): Promise<number> {
    if (memberIds.length === 0) return 0;
    await tx.$executeRaw`
      INSERT INTO audience_entries (workspace_id, audience_id, member_id, kind)
      SELECT ${workspaceId}, ${audienceId}, id, 'include' FROM unnest(${memberIds}::text[]) AS input(id)
      ON CONFLICT (workspace_id, audience_id, member_id)
      DO UPDATE SET kind = 'include', created_at = now() WHERE audience_entries.kind <> 'include'`;
    const [row] = await tx.$queryRaw<{ added: number }[]>`
      WITH added AS (
        INSERT INTO audience_members (workspace_id, audience_id, member_id, member_created_at)
        SELECT m.workspace_id, ${audienceId}, m.id, m.created_at FROM members AS m
        WHERE m.workspace_id = ${workspaceId} AND m.id = ANY(${memberIds}::text[])
        ON CONFLICT DO NOTHING
        RETURNING 1
      )
      SELECT count(*)::int AS added FROM added`;
    return row?.added ?? 0;
  },

  /**
   * Writes exclude entries for the existing members (so a rule cannot bring them back) and takes
   * them out of the audience; returns how many left it.
   */
  async exclude(tx: Tx, workspaceId: string, audienceId: string, memberIds: string[]): Promise<number> {
    await tx.$executeRaw`
      INSERT INTO audience_entries (workspace_id, audience_id, member_id, kind)
      SELECT m.workspace_id, ${audienceId}, m.id, 'exclude' FROM members AS m
      WHERE m.workspace_id = ${workspaceId} AND m.id = ANY(${memberIds}::text[])
      ON CONFLICT (workspace_id, audience_id, member_id)
      DO UPDATE SET kind = 'exclude', created_at = now() WHERE audience_entries.kind <> 'exclude'`;
    const [row] = await tx.$queryRaw<{ removed: number }[]>`
      WITH removed AS (
        DELETE FROM audience_members
        WHERE workspace_id = ${workspaceId} AND audience_id = ${audienceId} AND member_id = ANY(${memberIds}::text[])
        RETURNING 1
      )
      SELECT count(*)::int AS removed FROM removed`;
    return row?.removed ?? 0;
  },

  /**
   * Gives the target the union of the sources' include entries and current members; returns the
   * target's resulting member count.
   */
  async copyUnion(tx: Tx, workspaceId: string, targetId: string, sourceIds: string[]): Promise<number> {
    await tx.$executeRaw`
      INSERT INTO audience_entries (workspace_id, audience_id, member_id, kind)
      SELECT DISTINCT workspace_id, ${targetId}, member_id, 'include'::entry_kind FROM audience_entries
      WHERE workspace_id = ${workspaceId} AND audience_id = ANY(${sourceIds}::text[]) AND kind = 'include'
      ON CONFLICT DO NOTHING`;
    const [row] = await tx.$queryRaw<{ added: number }[]>`
      WITH added AS (
        INSERT INTO audience_members (workspace_id, audience_id, member_id, member_created_at)
        SELECT DISTINCT workspace_id, ${targetId}, member_id, member_created_at FROM audience_members
        WHERE workspace_id = ${workspaceId} AND audience_id = ANY(${sourceIds}::text[])
        ON CONFLICT DO NOTHING
        RETURNING 1
      )
      SELECT count(*)::int AS added FROM added`;
    return row?.added ?? 0;
  },

  /** One keyset page of the audience's members, with exact hasNextPage/hasPreviousPage. */
  async page(db: Reader, workspaceId: string, audienceId: string, query: PageQuery): Promise<PageRows> {
    const backward = query.before !== undefined;
    const cursor = query.before ?? query.after;
    // Walking backwards scans against the sort order and reverses the rows afterwards.
    const scanAscending = (query.sortDirection === "ASC") !== backward;
    const scope = scopeSql(workspaceId, audienceId, query.search);
    const direction = scanAscending ? Prisma.sql`ASC` : Prisma.sql`DESC`;
    const fetched = await db.$queryRaw<MemberRow[]>`
      SELECT am.member_id AS id, am.member_created_at AS "createdAt", m.email, m.fields,
             m.alternative_emails AS "alternativeEmails"
      FROM audience_members AS am
      JOIN members AS m ON m.workspace_id = am.workspace_id AND m.id = am.member_id
      WHERE ${scope} ${cursor ? Prisma.sql`AND ${beyond(cursor, scanAscending, false)}` : Prisma.empty}
      ORDER BY am.member_created_at ${direction}, am.member_id ${direction}
      LIMIT ${query.limit + 1}`;
    const rows = fetched.slice(0, query.limit);
    const more = fetched.length > query.limit;
    // Is there anything on the other side of the page? Past its first row, or, on an empty page,
    // at or before the cursor. Without a cursor the page starts at the very beginning.
    const first = rows[0];
    const behind = cursor
      ? await exists(
          db,
          scope,
          query.search,
          first ? beyond(first, !scanAscending, false) : beyond(cursor, !scanAscending, true),
        )
      : false;
    if (backward) rows.reverse();
    return backward
      ? { rows, hasPreviousPage: more, hasNextPage: behind }
      : { rows, hasNextPage: more, hasPreviousPage: behind };
  },

  /** Members matching search (the caller reads the stored count when there is no search). */
  async countMatching(db: Reader, workspaceId: string, audienceId: string, search: string): Promise<number> {
    const [row] = await db.$queryRaw<{ count: number }[]>`
      SELECT count(*)::int AS count FROM audience_members AS am
      JOIN members AS m ON m.workspace_id = am.workspace_id AND m.id = am.member_id
      WHERE ${scopeSql(workspaceId, audienceId, search)}`;
    return row?.count ?? 0;
  },
};

function scopeSql(workspaceId: string, audienceId: string, search: string | undefined): Prisma.Sql {
  const base = Prisma.sql`am.workspace_id = ${workspaceId} AND am.audience_id = ${audienceId}`;
  if (!search) return base;
  // strpos, not LIKE: a search term's % and _ are ordinary characters.
  const term = search.toLowerCase();
  return Prisma.sql`${base} AND (
    strpos(lower(coalesce(m.email, '')), ${term}) > 0 OR
    strpos(lower(coalesce(m.fields->>'firstName', '')), ${term}) > 0 OR
    strpos(lower(coalesce(m.fields->>'lastName', '')), ${term}) > 0 OR
    strpos(lower(coalesce(m.fields->>'role', '')), ${term}) > 0 OR
    strpos(lower(coalesce(m.fields->>'company', '')), ${term}) > 0)`;
}

/** Rows strictly (or, inclusive, also at) past the position in the given scan direction. */
function beyond(position: Position, ascending: boolean, inclusive: boolean): Prisma.Sql {
  const operator = Prisma.raw(ascending ? (inclusive ? ">=" : ">") : inclusive ? "<=" : "<");
  return Prisma.sql`(am.member_created_at, am.member_id) ${operator} (${position.createdAt.toISOString()}::timestamptz, ${position.id}::text)`;
}

async function exists(
  db: Reader,
  scope: Prisma.Sql,
  search: string | undefined,
  condition: Prisma.Sql,
): Promise<boolean> {
  // The members join is only needed to match a search term.
  const join = search
    ? Prisma.sql`JOIN members AS m ON m.workspace_id = am.workspace_id AND m.id = am.member_id`
    : Prisma.empty;
  const [row] = await db.$queryRaw<{ found: boolean }[]>`
    SELECT EXISTS (
      SELECT 1 FROM audience_members AS am ${join}
      WHERE ${scope} AND ${condition}
    ) AS found`;
  return row?.found ?? false;
}

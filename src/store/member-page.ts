import { Prisma, type PrismaClient } from "../../generated/prisma/client.ts";
import type { Position } from "../domain/cursor.ts";
import { fold } from "../domain/filter.ts";
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
 * What is being paged: an audience's members (a range of the audience_members index, which
 * carries each member's createdAt) or every member of the workspace (the members index).
 */
interface Listing {
  from: Prisma.Sql;
  where: Prisma.Sql;
  createdAt: Prisma.Sql;
  id: Prisma.Sql;
}

const MEMBERS_JOIN = Prisma.sql`JOIN members AS m ON m.workspace_id = am.workspace_id AND m.id = am.member_id`;

export const audienceListing = (workspaceId: string, audienceId: string, withMembers: boolean): Listing => ({
  from: withMembers ? Prisma.sql`audience_members AS am ${MEMBERS_JOIN}` : Prisma.sql`audience_members AS am`,
  where: Prisma.sql`am.workspace_id = ${workspaceId} AND am.audience_id = ${audienceId}`,
  createdAt: Prisma.sql`am.member_created_at`,
  id: Prisma.sql`am.member_id`,
});

export const workspaceListing = (workspaceId: string): Listing => ({
  from: Prisma.sql`members AS m`,
  where: Prisma.sql`m.workspace_id = ${workspaceId}`,
  createdAt: Prisma.sql`m.created_at`,
  id: Prisma.sql`m.id`,
});

/**
 * One keyset page with exact hasNextPage/hasPreviousPage. The page and the look behind its
 * start are independent statements, sent at once (on PostgreSQL, over two pooled connections).
 */
export async function pageMembers(
  db: Reader,
  listing: (withMembers: boolean) => Listing,
  query: PageQuery,
): Promise<PageRows> {
  const backward = query.before !== undefined;
  const cursor = query.before ?? query.after;
  // Walking backwards scans against the sort order and reverses the rows afterwards.
  const scanAscending = (query.sortDirection === "ASC") !== backward;
  const full = listing(true);
  const direction = scanAscending ? Prisma.sql`ASC` : Prisma.sql`DESC`;
  const fetching = db.$queryRaw<MemberRow[]>`
    SELECT m.id, m.created_at AS "createdAt", m.email, m.fields, m.alternative_emails AS "alternativeEmails"
    FROM ${full.from}
    WHERE ${full.where} ${searchSql(query.search)}
      ${cursor ? Prisma.sql`AND ${beyond(full, cursor, scanAscending, false)}` : Prisma.empty}
    ORDER BY ${full.createdAt} ${direction}, ${full.id} ${direction}
    LIMIT ${query.limit + 1}`;
  // Anything on the other side of the page? The page starts just past the cursor, so that is
  // anything at or before the cursor. Without a cursor the page starts at the very beginning.
  let lookingBehind: Promise<boolean> = Promise.resolve(false);
  if (cursor) {
    // The members join is only needed to match a search term.
    const scope = listing(query.search !== undefined);
    lookingBehind = db.$queryRaw<{ found: boolean }[]>`
      SELECT EXISTS (SELECT 1 FROM ${scope.from} WHERE ${scope.where} ${searchSql(query.search)}
        AND ${beyond(scope, cursor, !scanAscending, true)}) AS found`.then(([row]) => row?.found ?? false);
  }
  const [fetched, behind] = await Promise.all([fetching, lookingBehind]);
  const rows = fetched.slice(0, query.limit);
  const more = fetched.length > query.limit;
  if (backward) rows.reverse();
  return backward
    ? { rows, hasPreviousPage: more, hasNextPage: behind }
    : { rows, hasNextPage: more, hasPreviousPage: behind };
}

/** How many members of the listing match the search term. */
export async function countMatching(db: Reader, listing: Listing, search: string): Promise<number> {
  const [row] = await db.$queryRaw<{ count: number }[]>`
    SELECT count(*)::int AS count FROM ${listing.from} WHERE ${listing.where} ${searchSql(search)}`;
  return row?.count ?? 0;
}

/** Case-insensitive term in e-mail or a named field; strpos, so % and _ are ordinary characters. */
function searchSql(search: string | undefined): Prisma.Sql {
  if (!search) return Prisma.empty;
  const term = fold(search);
  const within = (value: Prisma.Sql) => Prisma.sql`strpos(coalesce(${value}, ''), ${term}::text) > 0`;
  return Prisma.sql`AND (${Prisma.join(
    [
      within(Prisma.sql`m.folded->>'email'`),
      ...["firstName", "lastName", "role", "company"].map((key) =>
        within(Prisma.sql`m.folded->'fields'->>${key}::text`),
      ),
    ],
    " OR ",
  )})`;
}

/** Rows strictly (or, inclusive, also at) past the position in the given scan direction. */
function beyond(listing: Listing, position: Position, ascending: boolean, inclusive: boolean): Prisma.Sql {
  const operator = Prisma.raw(ascending ? (inclusive ? ">=" : ">") : inclusive ? "<=" : "<");
  return Prisma.sql`(${listing.createdAt}, ${listing.id}) ${operator} (${position.createdAt.toISOString()}::timestamptz, ${position.id}::text)`;
}

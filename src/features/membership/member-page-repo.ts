import { Prisma } from "../../../generated/prisma/client.ts";
import type { Position } from "../../domain/cursor.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";
import { anySetBehind, setBitPositions } from "./bitset.ts";
import { base64Of, bitOf, CHUNK_BITS, chunkBytes, chunkOf, kind, storedBits, storedHas } from "./member-bits-sql.ts";
import type { MemberRow } from "./member-repo.ts";
import { type ListingScope, searchedCount, searchSql } from "./member-search-sql.ts";
import { seqRange } from "./member-set.ts";

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

/** What a keyset page walks: members of the workspace, or of an audience that match a search term. */
export interface Listing {
  from: Prisma.Sql;
  where: Prisma.Sql;
}

export const workspaceListing = (workspaceId: string): Listing => ({
  from: Prisma.sql`members AS m`,
  where: Prisma.sql`m.workspace_id = ${workspaceId}`,
});

/** The audience's members among the workspace's (each looked up in its member bitset). */
export const audienceListing = (workspaceId: string, audienceId: string): Listing => ({
  from: Prisma.sql`members AS m JOIN membership_chunks AS mc
    ON mc.workspace_id = m.workspace_id AND mc.audience_id = ${audienceId} AND mc.kind = ${kind("member")}
    AND mc.chunk = ${chunkOf(Prisma.sql`m.seq`)}`,
  where: Prisma.sql`m.workspace_id = ${workspaceId} AND ${storedHas("mc", bitOf(Prisma.sql`m.seq`))}`,
});

const CHUNK_BASE64 = base64Of(storedBits("t"));

/** Walking backwards scans against the sort order and reverses the rows afterwards. */
const scansAscending = (query: PageQuery) => (query.sortDirection === "ASC") !== (query.before !== undefined);

function finish(query: PageQuery, fetched: MemberRow[], behind: boolean): PageRows {
  const rows = fetched.slice(0, query.limit);
  const more = fetched.length > query.limit;
  if (query.before !== undefined) {
    rows.reverse();
    return { rows, hasPreviousPage: more, hasNextPage: behind };
  }
  return { rows, hasNextPage: more, hasPreviousPage: behind };
}

/**
 * One keyset page of a listing in (createdAt, id) order, with exact hasNextPage/hasPreviousPage,
 * and how many members of the listing match (its totalCount). With an audience, also whether
 * the workspace has it (false: no such audience; the listing then matches nobody). One statement:
 * the page, the look behind its start, the count and the audience, read together.
 */
export async function pageListing(
  db: SqlClient,
  listing: Listing,
  query: PageQuery,
  scope: ListingScope,
): Promise<PageRows & { count: number; found: boolean }> {
  const cursor = query.before ?? query.after;
  const ascending = scansAscending(query);
  const direction = ascending ? Prisma.sql`ASC` : Prisma.sql`DESC`;
  const search = searchSql(query.search);
  // Anything on the other side of the page? The page starts just past the cursor, so that is
  // anything at or before the cursor. Without a cursor the page starts at the very beginning.
  const behind = cursor
    ? Prisma.sql`EXISTS (SELECT 1 FROM ${listing.from} WHERE ${listing.where} ${search}
        AND ${beyond(cursor, !ascending, true)})`
    : Prisma.sql`false`;
  const found = scope.audienceId
    ? Prisma.sql`EXISTS (SELECT 1 FROM audiences AS a WHERE a.workspace_id = ${scope.workspaceId} AND a.id = ${scope.audienceId})`
    : Prisma.sql`true`;
  const count =
    searchedCount(scope, query.search) ??
    Prisma.sql`(SELECT count(*)::int FROM ${listing.from} WHERE ${listing.where} ${search})`;
  const [row] = await db.$queryRaw<{ page: string | null; behind: boolean; count: number; found: boolean }[]>`
    SELECT
      (SELECT json_agg(${MEMBER_JSON} ORDER BY m.created_at ${direction}, m.id ${direction})::text FROM (
        SELECT m.* FROM ${listing.from}
        WHERE ${listing.where} ${search}
          ${cursor ? Prisma.sql`AND ${beyond(cursor, ascending, false)}` : Prisma.empty}
        ORDER BY m.created_at ${direction}, m.id ${direction}
        LIMIT ${query.limit + 1}
      ) AS m) AS page,
      ${behind} AS behind,
      ${count} AS count,
      ${found} AS found`;
  return {
    ...finish(query, membersOfJson(row?.page ?? null), row?.behind ?? false),
    count: row?.count ?? 0,
    found: row?.found ?? false,
  };
}

/**
 * Member numbers past a page's place that its first statement looks through, as a multiple of the
 * page: an audience that dense has its page among them, and the page needs no second statement.
 */
const GUESS_SPAN = 4;

/**
 * One page of an audience's members, read from its member bitset: member numbers are in
 * (createdAt, id) order, so the page is the next set bits past the cursor's place, found in a
 * chunk or two, and then the rows of those members by number. Also the audience's stored size
 * (null when there is no such audience), read by the same statement.
 *
 * The same statement also reads, at a guess, the members whose bits are set among the next
 * members past the place. When they are the page's numbers, found in the chunks (an audience
 * about as dense as its workspace), the guess is the page and the request is one round trip;
 * otherwise the members are read by number in a second statement.
 */
export async function pageAudience(
  db: SqlClient,
  workspaceId: string,
  audienceId: string,
  query: PageQuery,
): Promise<PageRows & { memberCount: number | null }> {
  const ascending = scansAscending(query);
  const wanted = query.limit + 1;
  const cursor = query.before ?? query.after;
  // The page holds the numbers at or past the edge in the scan direction; the rest lie behind it.
  const order = ascending ? Prisma.sql`ASC` : Prisma.sql`DESC`;
  const start = ascending ? 0 : 2 ** 31 - 1;
  const nothingPast = ascending ? 2 ** 31 - 1 : -1;
  const edge = cursor
    ? Prisma.sql`coalesce((SELECT m.seq FROM members AS m WHERE m.workspace_id = ${workspaceId}
        AND ${beyond(cursor, ascending, false)} ORDER BY m.created_at ${order}, m.id ${order} LIMIT 1), ${nothingPast}::int)`
    : Prisma.sql`${start}::int`;
  const set = Prisma.sql`t.workspace_id = ${workspaceId} AND t.audience_id = ${audienceId}
    AND t.kind = ${kind("member")} AND t.count > 0`;
  const [pastEdge, behindEdge] = ascending ? [Prisma.sql`>=`, Prisma.sql`<`] : [Prisma.sql`<=`, Prisma.sql`>`];
  // The guess looks through the member numbers from the first member past the place (the
  // cursor's edge, or the workspace's first or last member) to this many further: a range of the
  // (workspace_id, seq) index, whatever the statistics say.
  const span = GUESS_SPAN * wanted;
  const from = cursor
    ? Prisma.sql`(SELECT e.edge FROM e)`
    : Prisma.sql`(SELECT ${ascending ? Prisma.sql`min` : Prisma.sql`max`}(m.seq) FROM members AS m WHERE m.workspace_id = ${workspaceId})`;
  const guessRange = ascending
    ? Prisma.sql`m.seq >= ${from} AND m.seq < ${from}::bigint + ${span}::int`
    : Prisma.sql`m.seq <= ${from} AND m.seq > ${from}::bigint - ${span}::int`;
  const [first] = await db.$queryRaw<
    { memberCount: number | null; edge: number; behind: boolean; chunks: string | null; guess: string | null }[]
  >`
    WITH e AS (SELECT ${edge} AS edge),
    c AS MATERIALIZED (
      SELECT t.chunk, ${storedBits("t")} AS bits FROM e, membership_chunks AS t
      WHERE ${set} AND t.chunk ${pastEdge} ${chunkOf(Prisma.sql`e.edge`)}
      ORDER BY t.chunk ${order} LIMIT 2
    ),
    g AS (
      SELECT m.seq, ${MEMBER_JSON} AS member FROM members AS m
      WHERE m.workspace_id = ${workspaceId} AND ${guessRange}
        AND get_bit((SELECT c.bits FROM c WHERE c.chunk = ${chunkOf(Prisma.sql`m.seq`)}), ${bitOf(Prisma.sql`m.seq`)}) = 1
      ORDER BY m.seq ${order} LIMIT ${wanted}
    )
    SELECT e.edge,
      (SELECT a.member_count FROM audiences AS a WHERE a.workspace_id = ${workspaceId} AND a.id = ${audienceId})
        AS "memberCount",
      EXISTS (SELECT 1 FROM membership_chunks AS t WHERE ${set} AND t.chunk ${behindEdge} ${chunkOf(Prisma.sql`e.edge`)}) AS behind,
      (SELECT json_agg(json_build_array(c.chunk, ${base64Of(Prisma.sql`c.bits`)}) ORDER BY c.chunk ${order})::text FROM c) AS chunks,
      (SELECT json_agg(json_build_array(g.seq, g.member) ORDER BY g.seq ${order})::text FROM g) AS guess
    FROM e`;
  const memberCount = first?.memberCount ?? null;
  if (memberCount === null) return { rows: [], hasNextPage: false, hasPreviousPage: false, memberCount };
  const edgeSeq = first?.edge ?? start;
  const seqs: number[] = [];
  let behind = first?.behind ?? false;
  let rows = (JSON.parse(first?.chunks ?? "[]") as [number, string][]).map(([chunk, bits]) => ({ chunk, bits }));
  while (rows.length > 0) {
    for (const { chunk, bits } of rows) {
      const bytes = chunkBytes(bits);
      // Only the edge's own chunk holds bits behind the edge, up to 8,191 of them on a deep page:
      // whether there are any is all the page needs, so they are not walked one by one.
      const at = edgeSeq - chunk * CHUNK_BITS;
      const edgeHere = at >= 0 && at < CHUNK_BITS;
      if (edgeHere && anySetBehind(bytes, !ascending, at)) behind = true;
      for (const bit of setBitPositions(bytes, !ascending, edgeHere ? at : undefined)) {
        if (seqs.push(chunk * CHUNK_BITS + bit) === wanted) break;
      }
      if (seqs.length === wanted) break;
    }
    const last = rows.at(-1)?.chunk as number;
    if (seqs.length >= wanted || rows.length < 2) break;
    // A sparse audience: read on, more chunks at a time.
    rows = await db.$queryRaw<{ chunk: number; bits: string }[]>`
      SELECT t.chunk, ${CHUNK_BASE64} AS bits FROM membership_chunks AS t
      WHERE ${set} AND t.chunk ${ascending ? Prisma.sql`>` : Prisma.sql`<`} ${last}
      ORDER BY t.chunk ${order} LIMIT 16`;
  }
  // The guess is the first members past the edge whose bits are set, as the page's numbers are
  // the first set bits: it is the page when it holds exactly those numbers.
  const guess = JSON.parse(first?.guess ?? "[]") as [number, MemberJson][];
  const guessed = guess.length === seqs.length && guess.every(([seq], i) => seq === seqs[i]);
  const members = guessed
    ? guess.map(([, member]) => memberOfJson(member))
    : await membersBySeq(db, workspaceId, seqs, order);
  return { ...finish(query, members, behind), memberCount };
}

/**
 * A member of `members AS m` as one JSON array, for reading many rows as one json_agg document:
 * converting a hundred rows column by column on their way through the driver costs more than the
 * query itself.
 */
export const MEMBER_JSON = Prisma.sql`json_build_array(m.id, floor(extract(epoch FROM m.created_at) * 1000), m.email,
  m.fields, m.alternative_emails)`;

/** The members of a json_agg of MEMBER_JSON (null: no rows). */
export function membersOfJson(document: string | null): MemberRow[] {
  return (JSON.parse(document ?? "[]") as MemberJson[]).map(memberOfJson);
}

/** One MEMBER_JSON array. */
type MemberJson = [string, number, string | null, Record<string, string>, string[] | null];

const memberOfJson = ([id, createdAt, email, fields, alternativeEmails]: MemberJson): MemberRow => ({
  id,
  createdAt: new Date(createdAt),
  email,
  fields,
  alternativeEmails: alternativeEmails ?? [],
});

/** The members with these numbers, in page order (a member deleted meanwhile is skipped). */
async function membersBySeq(
  db: SqlClient,
  workspaceId: string,
  seqs: number[],
  order: Prisma.Sql,
): Promise<MemberRow[]> {
  if (seqs.length === 0) return [];
  // The range lets a dense page be one short index range scan instead of a lookup per member.
  const [low, high] = seqRange(seqs);
  const [row] = await db.$queryRaw<{ page: string | null }[]>`
    SELECT json_agg(${MEMBER_JSON} ORDER BY m.seq ${order})::text AS page
    FROM members AS m
    WHERE m.workspace_id = ${workspaceId} AND m.seq BETWEEN ${low}::int AND ${high}::int
      AND m.seq = ANY(${seqs}::int[])`;
  return membersOfJson(row?.page ?? null);
}

/** Members strictly (or, inclusive, also at) past the position in the given scan direction. */
function beyond(position: Position, ascending: boolean, inclusive: boolean): Prisma.Sql {
  const operator = Prisma.raw(ascending ? (inclusive ? ">=" : ">") : inclusive ? "<=" : "<");
  return Prisma.sql`(m.created_at, m.id) ${operator} (${position.createdAt.toISOString()}::timestamptz, ${position.id}::text)`;
}

/** The page reads, as one object a service can be given. */
export const memberPageRepo = { workspaceListing, audienceListing, pageListing, pageAudience };

export type MemberPageRepo = typeof memberPageRepo;

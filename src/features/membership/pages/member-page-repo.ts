import { Prisma } from "../../../../generated/prisma/client.ts";
import type { Position } from "../../../domain/cursor.ts";
import type { SqlClient } from "../../../platform/db/sql-client.ts";
import { setBitPositions } from "../bitset.ts";
import {
  base64Of,
  bitOf,
  CHUNK_BITS,
  chunkBytes,
  chunkOf,
  kind,
  pageSeqs,
  storedBits,
  storedHas,
} from "../member-bits-sql.ts";
import type { MemberRow } from "../member-repo.ts";
import { seqRange } from "../member-set.ts";
import { MEMBER_JSON, type MemberJson, memberOfJson, membersOfJson } from "./member-json-sql.ts";
import { type ListingScope, searchedCount, searchSql } from "./member-search-sql.ts";

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
 * Member numbers past a page's place that its guess looks through, as a multiple of the page: an
 * audience that dense has its page among them.
 */
const GUESS_SPAN = 4;

/**
 * One page of an audience's members, read from its member bitset: member numbers are in
 * (createdAt, id) order, so the page is the next set bits past the cursor's place, and then the
 * rows of those members by number. Also the audience's stored size (null when there is no such
 * audience), read by the same statement.
 *
 * The statement first guesses: the members whose bits are set among the next 4 × (limit + 1)
 * member numbers past the place, a short range of the members' key. When the guess finds a full
 * page (an audience about as dense as its workspace) it is the page, as the page's numbers are
 * the first set bits. Otherwise (a sparse audience, or its end), with `spellOutInSql` the same
 * statement spells out the page's numbers from the chunks that hold them (pageSeqs) and reads
 * those members by number: one statement whatever the density. PostgreSQL keeps the statement's
 * plan (it is prepared); PGlite plans every statement anew, and planning that part, and running
 * it, cost it more than the call it saves, so there the statement hands back the next chunks and
 * the process finds the numbers and reads their members in a second statement.
 */
export async function pageAudience(
  db: SqlClient,
  workspaceId: string,
  audienceId: string,
  query: PageQuery,
  { spellOutInSql }: { spellOutInSql: boolean },
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
  const edgeChunk = chunkOf(Prisma.sql`e.edge`);
  const edgeBit = bitOf(Prisma.sql`e.edge`);
  // Whether the edge's own chunk has members behind the edge: its bits on that side counted.
  const behindInEdgeChunk = ascending
    ? Prisma.sql`bit_count(substring(c.bits FROM 1 FOR ${edgeBit})) > 0`
    : Prisma.sql`bit_count(substring(c.bits FROM ${edgeBit} + 2)) > 0`;
  const spelledOut = spellOutInSql
    ? Prisma.sql`(SELECT json_agg(${MEMBER_JSON} ORDER BY m.seq ${order})::text
        FROM p JOIN members AS m ON m.workspace_id = ${workspaceId} AND m.seq = p.seq)`
    : Prisma.sql`NULL`;
  // Without it, when the guess falls short, the chunks it read and what it found (with their
  // numbers), for the process to read on from: the guess is still the page when those chunks
  // hold no more (the audience's end).
  const short = (column: Prisma.Sql) =>
    spellOutInSql ? Prisma.sql`NULL` : Prisma.sql`CASE WHEN (SELECT count(*) FROM g) < ${wanted} THEN ${column} END`;
  const [first] = await db.$queryRaw<
    {
      memberCount: number | null;
      edge: number;
      behind: boolean;
      page: string | null;
      chunks: string | null;
      guess: string | null;
    }[]
  >`
    WITH e AS (SELECT ${edge} AS edge),
    c AS MATERIALIZED (
      SELECT t.chunk, ${storedBits("t")} AS bits FROM e, membership_chunks AS t
      WHERE ${set} AND t.chunk ${pastEdge} ${chunkOf(Prisma.sql`e.edge`)}
      ORDER BY t.chunk ${order} LIMIT 2
    ),
    g AS MATERIALIZED (
      SELECT m.seq, ${MEMBER_JSON} AS member FROM members AS m
      WHERE m.workspace_id = ${workspaceId} AND ${guessRange}
        AND get_bit((SELECT c.bits FROM c WHERE c.chunk = ${chunkOf(Prisma.sql`m.seq`)}), ${bitOf(Prisma.sql`m.seq`)}) = 1
      ORDER BY m.seq ${order} LIMIT ${wanted}
    )${
      spellOutInSql
        ? Prisma.sql`,
    pa AS (
      SELECT t.chunk, ${storedBits("t")} AS bits, t.count AS n FROM e, membership_chunks AS t WHERE ${set} AND t.chunk ${pastEdge} ${edgeChunk}
    ),
    ${pageSeqs("pa", ascending, query.limit, { at: Prisma.sql`(SELECT e.edge FROM e)` })}`
        : Prisma.empty
    }
    SELECT e.edge,
      (SELECT a.member_count FROM audiences AS a WHERE a.workspace_id = ${workspaceId} AND a.id = ${audienceId})
        AS "memberCount",
      EXISTS (SELECT 1 FROM membership_chunks AS t WHERE ${set} AND t.chunk ${behindEdge} ${edgeChunk})
        OR coalesce((SELECT ${behindInEdgeChunk} FROM c WHERE c.chunk = ${edgeChunk}), false) AS behind,
      CASE WHEN (SELECT count(*) FROM g) = ${wanted}
        THEN (SELECT json_agg(g.member ORDER BY g.seq ${order})::text FROM g) ELSE ${spelledOut} END AS page,
      ${short(Prisma.sql`(SELECT json_agg(json_build_array(c.chunk, ${base64Of(Prisma.sql`c.bits`)}) ORDER BY c.chunk ${order})::text FROM c)`)} AS chunks,
      ${short(Prisma.sql`(SELECT json_agg(json_build_array(g.seq, g.member) ORDER BY g.seq ${order})::text FROM g)`)} AS guess
    FROM e`;
  const memberCount = first?.memberCount ?? null;
  if (memberCount === null) return { rows: [], hasNextPage: false, hasPreviousPage: false, memberCount };
  const behind = first?.behind ?? false;
  const members =
    first?.page != null
      ? membersOfJson(first.page)
      : await sparsePage(
          db,
          workspaceId,
          { set, order, ascending, wanted },
          first?.edge ?? start,
          first ?? { chunks: null, guess: null },
        );
  return { ...finish(query, members, behind), memberCount };
}

/**
 * A page whose guess fell short, read on by the process (the embedded store): the numbers from
 * the chunks the first statement handed back, from the edge on, and more chunks, 16 at a time,
 * until there are enough; the guess when it holds exactly those numbers, the members by number
 * otherwise.
 */
async function sparsePage(
  db: SqlClient,
  workspaceId: string,
  { set, order, ascending, wanted }: { set: Prisma.Sql; order: Prisma.Sql; ascending: boolean; wanted: number },
  edgeSeq: number,
  { chunks, guess }: { chunks: string | null; guess: string | null },
): Promise<MemberRow[]> {
  const seqs: number[] = [];
  let rows = (JSON.parse(chunks ?? "[]") as [number, string][]).map(([chunk, bits]) => ({ chunk, bits }));
  while (rows.length > 0) {
    for (const { chunk, bits } of rows) {
      // Only the edge's own chunk holds bits behind the edge: the scan starts at the edge there.
      const at = edgeSeq - chunk * CHUNK_BITS;
      const edgeHere = at >= 0 && at < CHUNK_BITS;
      for (const bit of setBitPositions(chunkBytes(bits), !ascending, edgeHere ? at : undefined)) {
        if (seqs.push(chunk * CHUNK_BITS + bit) === wanted) break;
      }
      if (seqs.length === wanted) break;
    }
    const last = rows.at(-1)?.chunk as number;
    if (seqs.length >= wanted || rows.length < 2) break;
    rows = await db.$queryRaw<{ chunk: number; bits: string }[]>`
      SELECT t.chunk, ${CHUNK_BASE64} AS bits FROM membership_chunks AS t
      WHERE ${set} AND t.chunk ${ascending ? Prisma.sql`>` : Prisma.sql`<`} ${last}
      ORDER BY t.chunk ${order} LIMIT 16`;
  }
  const found = JSON.parse(guess ?? "[]") as [number, MemberJson][];
  if (found.length === seqs.length && found.every(([seq], i) => seq === seqs[i])) {
    return found.map(([, member]) => memberOfJson(member));
  }
  return membersBySeq(db, workspaceId, seqs, order);
}

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

import { Prisma, type PrismaClient } from "../../generated/prisma/client.ts";
import { NAMED_FIELDS } from "../domain/member-merge.ts";
import { CHUNK_SHIFT, kind } from "./member-bits.ts";
import {
  audienceListing,
  type Listing,
  MEMBER_JSON,
  membersOfJson,
  searchSql,
  workspaceListing,
} from "./member-page.ts";
import type { MemberRow } from "./member-repo.ts";

/**
 * The reads of an export: every member of a workspace or of an audience, walked by member number
 * (members.seq), whose order is (createdAt, id) order (src/store/member-repo.ts numbers them so).
 * Each statement reads one range of numbers, so it stays short whatever the size of the export
 * (statement and read timeouts apply to each, and the embedded store, which runs one statement
 * at a time, serves other requests between them). Each also says where the next range worth
 * reading starts, so an audience's empty stretches of the workspace are skipped, not scanned.
 */

/** Member numbers from `from` up to, not including, `to`. */
export interface SeqRange {
  from: number;
  to: number;
}

/** What an export holds: the workspace's members, or an audience's, matching a search term if given. */
export interface Selection {
  workspaceId: string;
  audienceId?: string | undefined;
  search?: string | undefined;
}

/** One statement's worth: its part of the file, and the next number to read from (null: nothing further). */
export interface Batch<T> {
  body: T;
  next: number | null;
}

const SHIFT = Prisma.raw(String(CHUNK_SHIFT));

const listingOf = ({ workspaceId, audienceId }: Selection): Listing =>
  audienceId === undefined ? workspaceListing(workspaceId) : audienceListing(workspaceId, audienceId);

/** The selection's members within the range (a condition on `members AS m`, after the listing's). */
const within = (selection: Selection, range: SeqRange) =>
  Prisma.sql`m.seq >= ${range.from}::int AND m.seq < ${range.to}::int ${searchSql(selection.search)}`;

/**
 * Where a scan goes on from `at`: ascending, the first number at or past it that may be
 * selected; descending, one past the last number before it. A workspace's numbers have gaps only
 * where members were deleted; an audience's members lie in the chunks of its member bitset.
 */
function nextSql({ workspaceId, audienceId }: Selection, at: number | Prisma.Sql, ascending: boolean): Prisma.Sql {
  const position = typeof at === "number" ? Prisma.sql`${at}::int` : at;
  if (audienceId === undefined) {
    return ascending
      ? Prisma.sql`(SELECT min(n.seq) FROM members AS n WHERE n.workspace_id = ${workspaceId} AND n.seq >= ${position})`
      : Prisma.sql`(SELECT max(n.seq) + 1 FROM members AS n WHERE n.workspace_id = ${workspaceId} AND n.seq < ${position})`;
  }
  const chunks = Prisma.sql`FROM membership_chunks AS t WHERE t.workspace_id = ${workspaceId}
    AND t.audience_id = ${audienceId} AND t.kind = ${kind("member")} AND t.count > 0`;
  return ascending
    ? Prisma.sql`(SELECT min(greatest(${position}, t.chunk << ${SHIFT})) ${chunks}
        AND t.chunk >= (${position}) >> ${SHIFT})`
    : Prisma.sql`(SELECT max(least(${position}, (t.chunk + 1) << ${SHIFT})) ${chunks}
        AND t.chunk <= ((${position}) - 1) >> ${SHIFT})`;
}

/** The next position of a scan that has read `range`. */
const after = (selection: Selection, range: SeqRange, ascending: boolean) =>
  nextSql(selection, ascending ? range.to : range.from, ascending);

/**
 * A CSV field (RFC 4180): quoted when it holds a comma, a quote, CR or LF, its quotes doubled.
 * The lines are built in the database, so that a batch crosses the driver as one text value: a
 * CSV library in JavaScript cannot keep up with COPY (csv-stringify alone took 1.6 times as long
 * to format a million members as PostgreSQL took to COPY them out), nor can decoding the rows.
 */
const csvField = (column: string) => {
  const c = Prisma.raw(`v.${column}`);
  return Prisma.sql`CASE WHEN ${c} ~ E'[",\\r\\n]' THEN '"' || replace(${c}, '"', '""') || '"' ELSE ${c} END`;
};

export const memberExportRepo = {
  /**
   * Where a scan of the selection starts and ends: the numbers given out before now (members
   * created during the export are left out); undefined for an audience the workspace does not
   * have (archived ones are read like the others).
   */
  async bounds(db: PrismaClient, selection: Selection): Promise<SeqRange | undefined> {
    const { workspaceId, audienceId } = selection;
    const found =
      audienceId === undefined
        ? Prisma.sql`true`
        : Prisma.sql`EXISTS (SELECT 1 FROM audiences AS a WHERE a.workspace_id = ${workspaceId} AND a.id = ${audienceId})`;
    const [row] = await db.$queryRaw<{ from: number | null; to: number | null; found: boolean }[]>`
      SELECT ${nextSql(selection, 0, true)} AS "from", ${nextSql(selection, Prisma.sql`w.member_seq`, false)} AS "to",
             ${found} AS found
      FROM workspaces AS w WHERE w.workspace_id = ${workspaceId}`;
    if (!row?.found) return undefined;
    return { from: row.from ?? 0, to: row.to ?? 0 };
  },

  /** The custom field keys (not the four named fields) that members of the range have. */
  async fieldKeys(db: PrismaClient, selection: Selection, range: SeqRange): Promise<Batch<string[]>> {
    const listing = listingOf(selection);
    const [row] = await db.$queryRaw<{ body: string[] | null; next: number | null }[]>`
      SELECT (SELECT array_agg(DISTINCT k.key) FROM ${listing.from}
                CROSS JOIN LATERAL jsonb_object_keys(m.fields - ${[...NAMED_FIELDS]}::text[]) AS k(key)
              WHERE ${listing.where} AND ${within(selection, range)}) AS body,
             ${after(selection, range, true)} AS next`;
    return { body: row?.body ?? [], next: row?.next ?? null };
  },

  /**
   * The range's members as CSV lines, each ending with LF: id, email, alternativeEmails
   * (;-separated), the named fields, then the given custom fields ("" where a member has none).
   */
  async csvLines(
    db: PrismaClient,
    selection: Selection,
    range: SeqRange,
    ascending: boolean,
    keys: readonly string[],
  ): Promise<Batch<string>> {
    const listing = listingOf(selection);
    const fields = [...NAMED_FIELDS, ...keys].map(
      (key, i) => Prisma.sql`coalesce(m.fields->>${key}::text, '') AS f${Prisma.raw(String(i))}`,
    );
    const columns = ["id", "email", "alternatives", ...fields.map((_, i) => `f${i}`)];
    const order = ascending ? Prisma.sql`ASC` : Prisma.sql`DESC`;
    // OFFSET 0 keeps the inner query a query of its own: merged into the outer one, each value
    // would be computed again by every use csvField makes of it.
    const [row] = await db.$queryRaw<{ body: string | null; next: number | null }[]>`
      SELECT (SELECT string_agg(concat_ws(',', ${Prisma.join(columns.map(csvField))}) || E'\\n', '' ORDER BY v.seq ${order})
              FROM (SELECT m.seq, m.id, coalesce(m.email, '') AS email,
                           array_to_string(m.alternative_emails, ';') AS alternatives, ${Prisma.join(fields)}
                    FROM ${listing.from} WHERE ${listing.where} AND ${within(selection, range)} OFFSET 0) AS v) AS body,
             ${after(selection, range, ascending)} AS next`;
    return { body: row?.body ?? "", next: row?.next ?? null };
  },

  /** The range's members, in scan order. */
  async members(
    db: PrismaClient,
    selection: Selection,
    range: SeqRange,
    ascending: boolean,
  ): Promise<Batch<MemberRow[]>> {
    const listing = listingOf(selection);
    const order = ascending ? Prisma.sql`ASC` : Prisma.sql`DESC`;
    const [row] = await db.$queryRaw<{ body: string | null; next: number | null }[]>`
      SELECT (SELECT json_agg(${MEMBER_JSON} ORDER BY m.seq ${order})::text FROM ${listing.from}
              WHERE ${listing.where} AND ${within(selection, range)}) AS body,
             ${after(selection, range, ascending)} AS next`;
    return { body: membersOfJson(row?.body ?? null), next: row?.next ?? null };
  },
};

export type MemberExportRepo = typeof memberExportRepo;

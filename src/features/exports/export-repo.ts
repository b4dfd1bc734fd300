import { Prisma } from "../../../generated/prisma/client.ts";
import { NAMED_FIELDS } from "../../domain/member-merge.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";
import { CHUNK_BITS, kind } from "../membership/member-bits-sql.ts";
import type { MemberRow } from "../membership/member-repo.ts";
import { MEMBER_JSON, membersOfJson } from "../membership/pages/member-json-sql.ts";
import { audienceListing, type Listing, workspaceListing } from "../membership/pages/member-page-repo.ts";
import { searchSql } from "../membership/pages/member-search-sql.ts";
import { chunksAtSql, membersAtSql } from "../membership/transition-repo.ts";

/**
 * The reads of an export: every member of a workspace or of an audience, walked by member number
 * (members.seq), whose order is (createdAt, id) order (src/features/membership/member-repo.ts numbers them so).
 * Each statement reads one range of numbers, so it stays short whatever the size of the export
 * (statement and read timeouts apply to each, and the embedded store, which runs one statement
 * at a time, serves other requests between them).
 */

/** Member numbers from `from` up to, not including, `to`. */
export interface SeqRange {
  from: number;
  to: number;
}

/**
 * What an export holds: the workspace's members, or an audience's, matching a search term if
 * given; or an audience's at an earlier instant (`asOf`, the exclusive bound the membership record
 * is read before, without a search), from the record.
 */
export type Selection =
  | { workspaceId: string; audienceId?: string | undefined; search?: string | undefined; asOf?: undefined }
  | { workspaceId: string; audienceId: string; search?: undefined; asOf: Date };

/** A member of an earlier instant, deleted since: its number, id and creation are all that is kept. */
export type ExportedMember = MemberRow & { deletedAt?: Date | undefined };

/**
 * The members of an audience at an instant within one range of numbers, as rows shaped like
 * members' (`m`): as they are now, or, deleted since, by their id and creation (deleted_members).
 */
const recordedListing = (workspaceId: string, audienceId: string, asOf: Date, range: SeqRange): Listing => ({
  from: Prisma.sql`(
    SELECT i.seq, coalesce(n.id, d.id) AS id, n.email, coalesce(n.fields, '{}'::jsonb) AS fields,
      coalesce(n.alternative_emails, '{}'::text[]) AS alternative_emails,
      coalesce(n.created_at, d.created_at) AS created_at, d.deleted_at
    FROM (${membersAtSql(workspaceId, audienceId, asOf, range)}) AS i
    LEFT JOIN members AS n ON n.workspace_id = ${workspaceId} AND n.seq = i.seq
    LEFT JOIN deleted_members AS d ON d.workspace_id = ${workspaceId} AND d.seq = i.seq AND n.id IS NULL
  ) AS m`,
  where: Prisma.sql`true`,
});

const listingOf = (selection: Selection, range: SeqRange): Listing =>
  selection.asOf !== undefined
    ? recordedListing(selection.workspaceId, selection.audienceId, selection.asOf, range)
    : selection.audienceId === undefined
      ? workspaceListing(selection.workspaceId)
      : audienceListing(selection.workspaceId, selection.audienceId);

/**
 * The selection's members within the range (a condition after the listing's). For an audience,
 * also the range's chunks (`mc`, audienceListing's), and each chunk's numbers spelt as a range of
 * m.seq: a plan is then right without statistics too (the embedded store has none), reading each
 * member of the range once, where a plan that expects one chunk would read the range once per
 * chunk of the audience.
 */
function within(selection: Selection, { from, to }: SeqRange): Prisma.Sql {
  const chunks =
    selection.audienceId === undefined || selection.asOf !== undefined
      ? Prisma.empty
      : Prisma.sql`AND mc.chunk BETWEEN ${Math.floor(from / CHUNK_BITS)}::int AND ${Math.floor((to - 1) / CHUNK_BITS)}::int
          AND m.seq >= mc.chunk * ${CHUNK_BITS}::int AND m.seq < (mc.chunk + 1) * ${CHUNK_BITS}::int`;
  return Prisma.sql`m.seq >= ${from}::int AND m.seq < ${to}::int ${chunks} ${searchSql(selection.search)}`;
}

const order = (ascending: boolean) => (ascending ? Prisma.sql`ASC` : Prisma.sql`DESC`);

/**
 * One CSV field of the line `v` (RFC 4180): quoted, its quotes doubled, when it holds a comma, a
 * quote, CR or LF. The lines are built in the database so that a batch crosses the driver as one
 * text value: formatting in JavaScript cannot keep up with COPY (csv-stringify alone took 1.6
 * times as long to format a million members as PostgreSQL took to COPY them out), nor can
 * decoding the rows.
 */
const SPECIAL = Prisma.sql`E'[",\\r\\n]'`;
/**
 * A cell a spreadsheet would run as a formula (OWASP "CSV injection"): one that starts with =,
 * +, -, @, tab or CR. Such a cell gets a ' before it, which spreadsheets take as "this is text".
 */
const FORMULA = Prisma.sql`E'^[=+@\\t\\r-]'`;
/**
 * Values joined by a unit separator (\x1f) of which one needs quoting or may start a formula. A
 * value holding \x1f can make it say yes for nothing: that line is only built the slower way.
 */
const SPECIAL_OR_FORMULA = Prisma.sql`E'[",\\r\\n]|(^|\\x1f)[=+@\\t\\r-]'`;

/** How CSV cells are written: as stored, or with formula cells escaped. */
export interface CsvStyle {
  escapeFormulas: boolean;
}

function csvField(column: string, { escapeFormulas }: CsvStyle): Prisma.Sql {
  const stored = Prisma.raw(`v.${column}`);
  const value = escapeFormulas
    ? Prisma.sql`(CASE WHEN ${stored} ~ ${FORMULA} THEN '''' || ${stored} ELSE ${stored} END)`
    : stored;
  return Prisma.sql`CASE WHEN ${value} ~ ${SPECIAL} THEN '"' || replace(${value}, '"', '""') || '"' ELSE ${value} END`;
}

/**
 * A CSV line of the values of `v` in these columns. All of them are tested at once first: almost
 * no member needs quoting or escaping, and one test of the values together costs a fraction of
 * one per value.
 */
function csvLine(columns: string[], style: CsvStyle): Prisma.Sql {
  const values = columns.map((c) => Prisma.raw(`v.${c}`));
  const special = style.escapeFormulas
    ? Prisma.sql`concat_ws(E'\\x1f', ${Prisma.join(values)}) ~ ${SPECIAL_OR_FORMULA}`
    : Prisma.sql`concat(${Prisma.join(values)}) ~ ${SPECIAL}`;
  return Prisma.sql`CASE WHEN ${special}
    THEN concat_ws(',', ${Prisma.join(columns.map((c) => csvField(c, style)))})
    ELSE concat_ws(',', ${Prisma.join(values)}) END`;
}

/** The stretches of member numbers of some chunks, up to the workspace's next number. */
const chunkSegments = (chunks: number[], end: number): SeqRange[] =>
  chunks
    .map((chunk) => ({ from: chunk * CHUNK_BITS, to: Math.min((chunk + 1) * CHUNK_BITS, end) }))
    .filter((range) => range.from < range.to);

export const memberExportRepo = {
  /**
   * The stretches of member numbers that hold the selection, in order: the workspace's numbers
   * given out before now (members created during the export are left out), and of those, for an
   * audience, the bitset chunks that hold any of its members. Undefined for an audience the
   * workspace does not have (archived ones are read like the others).
   */
  async segments(db: SqlClient, { workspaceId, audienceId, asOf }: Selection): Promise<SeqRange[] | undefined> {
    if (asOf !== undefined) {
      // The chunks that hold the audience's members at the instant (the record's); the audience
      // itself was checked with the instant (the history's fileBound).
      const [row] = await db.$queryRaw<{ chunks: number[] | null; end: number }[]>`
        SELECT w.member_seq AS "end",
          (SELECT array_agg(c.chunk ORDER BY c.chunk) FROM (${chunksAtSql(workspaceId, audienceId as string, asOf)}) AS c) AS chunks
        FROM workspaces AS w WHERE w.workspace_id = ${workspaceId}`;
      return chunkSegments(row?.chunks ?? [], row?.end ?? 0);
    }
    if (audienceId === undefined) {
      const [row] = await db.$queryRaw<{ first: number | null; last: number | null }[]>`
        SELECT min(m.seq) AS first, max(m.seq) AS last FROM members AS m WHERE m.workspace_id = ${workspaceId}`;
      return row?.first == null || row.last == null ? [] : [{ from: row.first, to: row.last + 1 }];
    }
    const [row] = await db.$queryRaw<{ chunks: number[] | null; end: number }[]>`
      SELECT w.member_seq AS "end",
        (SELECT array_agg(t.chunk ORDER BY t.chunk) FROM membership_chunks AS t
         WHERE t.workspace_id = a.workspace_id AND t.audience_id = a.id AND t.kind = ${kind("member")} AND t.count > 0)
        AS chunks
      FROM audiences AS a JOIN workspaces AS w ON w.workspace_id = a.workspace_id
      WHERE a.workspace_id = ${workspaceId} AND a.id = ${audienceId}`;
    if (!row) return undefined;
    return chunkSegments(row.chunks ?? [], row.end);
  },

  /** The custom field keys (not the four named fields) that members of the range have. */
  async fieldKeys(db: SqlClient, selection: Selection, range: SeqRange): Promise<string[]> {
    const listing = listingOf(selection, range);
    // Members without fields (created from a bare id) are passed over at once; the others' named
    // fields are taken out first: fewer keys to gather, and none from a member without custom fields.
    const [row] = await db.$queryRaw<{ keys: string[] | null }[]>`
      SELECT array_agg(DISTINCT k.key) AS keys FROM (
        SELECT jsonb_object_keys(m.fields - ${[...NAMED_FIELDS]}::text[]) AS key
        FROM ${listing.from} WHERE ${listing.where} AND ${within(selection, range)} AND m.fields <> '{}'::jsonb
      ) AS k`;
    return row?.keys ?? [];
  },

  /**
   * The range's members as CSV lines, each ending with LF: id, email, alternativeEmails
   * (;-separated), the named fields, then the given custom fields ("" where a member has none).
   */
  async csvLines(
    db: SqlClient,
    selection: Selection,
    range: SeqRange,
    ascending: boolean,
    keys: readonly string[],
    style: CsvStyle,
  ): Promise<string> {
    const listing = listingOf(selection, range);
    const fields = [...NAMED_FIELDS, ...keys].map(
      (key, i) => Prisma.sql`coalesce(m.fields->>${key}::text, '') AS ${Prisma.raw(`f${i}`)}`,
    );
    const columns = ["id", "email", "alternatives", ...fields.map((_, i) => `f${i}`)];
    // OFFSET 0 keeps the inner query a query of its own: merged into the outer one, each value
    // would be computed again by every use csvLine makes of it.
    const [row] = await db.$queryRaw<{ lines: string | null }[]>`
      SELECT string_agg(${csvLine(columns, style)}, E'\\n' ORDER BY v.seq ${order(ascending)}) || E'\\n' AS lines
      FROM (SELECT m.seq, m.id, coalesce(m.email, '') AS email,
                   array_to_string(m.alternative_emails, ';') AS alternatives, ${Prisma.join(fields)}
            FROM ${listing.from} WHERE ${listing.where} AND ${within(selection, range)} OFFSET 0) AS v`;
    return row?.lines ?? "";
  },

  /** The range's members, in scan order; at an earlier instant, with when those deleted since were. */
  async members(db: SqlClient, selection: Selection, range: SeqRange, ascending: boolean): Promise<ExportedMember[]> {
    const listing = listingOf(selection, range);
    const deletions =
      selection.asOf === undefined
        ? Prisma.sql`NULL::text`
        : Prisma.sql`json_agg(floor(extract(epoch FROM m.deleted_at) * 1000) ORDER BY m.seq ${order(ascending)})::text`;
    const [row] = await db.$queryRaw<{ members: string | null; deletions: string | null }[]>`
      SELECT json_agg(${MEMBER_JSON} ORDER BY m.seq ${order(ascending)})::text AS members, ${deletions} AS deletions
      FROM ${listing.from} WHERE ${listing.where} AND ${within(selection, range)}`;
    const members = membersOfJson(row?.members ?? null);
    if (row?.deletions == null) return members;
    const deletedAt = JSON.parse(row.deletions) as (number | null)[];
    return members.map((member, i) => {
      const at = deletedAt[i];
      return at == null ? member : { ...member, deletedAt: new Date(at) };
    });
  },
};

export type MemberExportRepo = typeof memberExportRepo;

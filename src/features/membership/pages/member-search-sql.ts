import { Prisma } from "../../../../generated/prisma/client.ts";
import { PLANNED_PER_RUN } from "../../../platform/db/prepared-statements.ts";
import { bitOf, chunkOf, kind, storedHas } from "../member-bits-sql.ts";
import { fold } from "../rules/filter.ts";

/** Whose members a listing holds: the workspace's, or one of its audiences'. */
export interface ListingScope {
  workspaceId: string;
  audienceId?: string | undefined;
}

/**
 * What search looks in: the folded e-mail and these fields, as member_searched_text (migration
 * 20261211000000_member_search_table) writes them into member_search, one per line.
 */
const SEARCHED_FIELDS = ["firstName", "lastName", "role", "company"] as const;

/** A LIKE pattern that finds the term anywhere, its %, _ and backslash taken literally. */
const containing = (term: string) => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * Case-insensitive term in e-mail or a named field, % and _ taken literally, for `members AS m`.
 * LIKE over the values one per line (member_search, kept by triggers on members) is what the
 * trigram index answers (a term of three characters or more has trigrams to look up), and it is
 * exact for a term without a line break, which cannot span two values; a term with one is also
 * tested value by value.
 */
export function searchSql(search: string | undefined): Prisma.Sql {
  if (!search) return Prisma.empty;
  const term = fold(search);
  // A rare term's plan reads the trigram index, a common one's may walk the page order instead
  // and look each member up by number.
  const anywhere = Prisma.sql`AND ${PLANNED_PER_RUN} EXISTS (SELECT 1 FROM member_search AS s
    WHERE s.workspace_id = m.workspace_id AND s.seq = m.seq AND s.searched LIKE ${containing(term)})`;
  if (!term.includes("\n")) return anywhere;
  const within = (value: Prisma.Sql) => Prisma.sql`strpos(coalesce(${value}, ''), ${term}::text) > 0`;
  const exact = Prisma.join(
    [
      within(Prisma.sql`m.folded->>'email'`),
      ...SEARCHED_FIELDS.map((key) => within(Prisma.sql`m.folded->'fields'->>${key}::text`)),
    ],
    " OR ",
  );
  return Prisma.sql`${anywhere} AND (${exact})`;
}

/**
 * How many of the listing's members a search term matches, counted in member_search alone (the
 * members' own rows are four times as wide): by number, and for an audience by its member bitset.
 * Undefined without a term, and for a term with a line break, whose value-by-value test needs
 * the members' rows.
 */
export function searchedCount(scope: ListingScope, search: string | undefined): Prisma.Sql | undefined {
  if (!search) return undefined;
  const term = fold(search);
  if (term.includes("\n")) return undefined;
  const seq = Prisma.sql`s.seq`;
  const audience = scope.audienceId
    ? Prisma.sql`JOIN membership_chunks AS mc ON mc.workspace_id = s.workspace_id AND mc.audience_id = ${scope.audienceId}
        AND mc.kind = ${kind("member")} AND mc.chunk = ${chunkOf(seq)} AND ${storedHas("mc", bitOf(seq))}`
    : Prisma.empty;
  return Prisma.sql`(SELECT ${PLANNED_PER_RUN} count(*)::int FROM member_search AS s ${audience}
    WHERE s.workspace_id = ${scope.workspaceId} AND s.searched LIKE ${containing(term)})`;
}

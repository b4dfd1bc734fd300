import { Prisma } from "../../../../generated/prisma/client.ts";
import { dateOf } from "./filter-sql.ts";

/**
 * member_dates holds every declared date field's value of every member as an instant, read the
 * way rules read it (filter-sql.ts `dateOf`): the index through which relative-time rules find
 * the members near a window's edge. These pieces keep it exact, inside the statements that write
 * members (member-repo.ts) and declare fields (field-type-repo.ts), so no write can skip it.
 */

/**
 * WITH items that bring member_dates up to date for the members of the CTE `rows` (columns seq,
 * fields), for every date field the workspace declares: a value is set, an empty one removed.
 */
export const syncMemberDates = (workspaceId: string, rows: string): Prisma.Sql => Prisma.sql`
  date_values AS MATERIALIZED (
    SELECT r.seq, t.key, ${dateOf(Prisma.sql`(r.fields->>t.key)`)} AS at
    FROM ${Prisma.raw(rows)} AS r JOIN field_types AS t ON t.workspace_id = ${workspaceId} AND t.type = 'date'
  ),
  dates_cleared AS (
    DELETE FROM member_dates AS d USING date_values AS v
    WHERE d.workspace_id = ${workspaceId} AND d.key = v.key AND d.seq = v.seq AND v.at IS NULL
  ),
  dates_set AS (
    INSERT INTO member_dates (workspace_id, key, seq, at)
    SELECT ${workspaceId}, v.key, v.seq, v.at FROM date_values AS v WHERE v.at IS NOT NULL
    ON CONFLICT (workspace_id, key, seq) DO UPDATE SET at = EXCLUDED.at
  )`;

/** A WITH item that removes the rows of the members in the CTE `rows` (column seq), being deleted. */
export const forgetMemberDates = (workspaceId: string, rows: string): Prisma.Sql => Prisma.sql`
  dates_forgotten AS (
    DELETE FROM member_dates AS d USING ${Prisma.raw(rows)} AS r WHERE d.workspace_id = ${workspaceId} AND d.seq = r.seq
  )`;

/** The statement that fills member_dates for a field being declared a date (after dropMemberDates). */
export const fillMemberDates = (workspaceId: string, key: string): Prisma.Sql => Prisma.sql`
  INSERT INTO member_dates (workspace_id, key, seq, at)
  SELECT ${workspaceId}, ${key}, v.seq, v.at
  FROM (SELECT m.seq, ${dateOf(Prisma.sql`(m.fields->>${key}::text)`)} AS at FROM members AS m
        WHERE m.workspace_id = ${workspaceId}) AS v
  WHERE v.at IS NOT NULL`;

/** The statement that removes a field's rows (it is no longer a date). */
export const dropMemberDates = (workspaceId: string, key: string): Prisma.Sql =>
  Prisma.sql`DELETE FROM member_dates WHERE workspace_id = ${workspaceId} AND key = ${key}`;

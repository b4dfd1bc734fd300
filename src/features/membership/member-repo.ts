import { Prisma } from "../../../generated/prisma/client.ts";
import type { MemberData } from "../../domain/member-merge.ts";
import { jsonRows } from "../../platform/db/json-rows.ts";
import { isUniqueViolation, RetryTransaction } from "../../platform/db/pg-errors.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";
import { forgetActivities } from "./activity-repo.ts";
import { fieldTypeRepo } from "./rules/field-type-repo.ts";
import { type FoldedMember, fold, foldMember } from "./rules/filter.ts";
import { forgetMemberDates, syncMemberDates } from "./rules/member-dates-sql.ts";

export interface MemberRow extends MemberData {
  id: string;
  createdAt: Date;
}

/** A member as writers read it: with its number. */
export interface NumberedMemberRow extends MemberRow {
  seq: number;
}

/** A member as rules see it (src/features/membership/rules/filter-match.ts). */
export interface FoldedMemberRow {
  id: string;
  seq: number;
  createdAt: Date;
  folded: FoldedMember;
}

/** The columns of a MemberRow, from `members AS m`. */
export const MEMBER_COLUMNS = Prisma.raw(
  `m.id, m.created_at AS "createdAt", m.email, m.fields, m.alternative_emails AS "alternativeEmails"`,
);

/**
 * The workspace id as a value the planner cannot see. With its value, the planner estimates the
 * workspace's rows from the statistics, and a workspace created since the last ANALYZE has none:
 * every index starting with workspace_id then looks as cheap as the primary key, and a lookup of
 * many ids chose the listing index, scanning the whole workspace once per id. Unseen, the value gets the average estimate, and only the key (workspace_id, id) fits.
 */
export const hidden = (workspaceId: string) => Prisma.sql`(SELECT ${workspaceId}::text)`;

/**
 * `members AS m` restricted to these ids, as a join that looks each id up in the primary key: a
 * plan that holds whatever the table's statistics say (even none yet, after a bulk load).
 */
export const byIds = (workspaceId: string, ids: string[]) =>
  Prisma.sql`${jsonRows("v", { id: ids })} JOIN members AS m ON m.workspace_id = ${hidden(workspaceId)} AND m.id = v.id`;

/** Bulk member reads and writes: one statement per kind, lists passed as JSON parameters (jsonRows). */
export const memberRepo = {
  /**
   * The members with these ids. Writers read them under the workspace's member lock
   * (src/features/membership/write-locks.ts), so nothing changes them before the transaction ends.
   */
  findByIds(tx: SqlClient, workspaceId: string, ids: string[]): Promise<NumberedMemberRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return tx.$queryRaw<NumberedMemberRow[]>`
      SELECT ${MEMBER_COLUMNS}, m.seq FROM ${byIds(workspaceId, ids)}`;
  },

  find(db: SqlClient, workspaceId: string, id: string): Promise<MemberRow | undefined> {
    return db.$queryRaw<MemberRow[]>`
      SELECT ${MEMBER_COLUMNS} FROM members AS m WHERE m.workspace_id = ${hidden(workspaceId)} AND m.id = ${id}`.then(
      (rows) => rows[0],
    );
  },

  /** What rule evaluation needs of these members: their number, folded data and creation time. */
  folded(tx: SqlClient, workspaceId: string, ids: string[]): Promise<FoldedMemberRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return tx.$queryRaw`
      SELECT m.id, m.seq, m.created_at AS "createdAt", m.folded FROM ${byIds(workspaceId, ids)}`;
  },

  /** The same, of the members with these numbers (by the unique key (workspace_id, seq)). */
  foldedBySeq(tx: SqlClient, workspaceId: string, seqs: number[]): Promise<FoldedMemberRow[]> {
    if (seqs.length === 0) return Promise.resolve([]);
    return tx.$queryRaw`
      SELECT m.id, m.seq, m.created_at AS "createdAt", m.folded FROM members AS m
      WHERE m.workspace_id = ${workspaceId} AND m.seq = ANY(${seqs}::int[])`;
  },

  /**
   * Deletes members, their e-mail addresses and their activities (neither has a foreign key:
   * this is the only statement that deletes members); returns the ids and numbers deleted. Their
   * numbers stay known as tombstones, so that events recorded before the deletion and published
   * after it can still name them, and in deleted_members, so that the membership record's
   * listings of earlier instants can (src/features/history/).
   */
  delete(tx: SqlClient, workspaceId: string, ids: string[]): Promise<{ id: string; seq: number }[]> {
    return tx.$queryRaw`
      WITH gone AS (
        DELETE FROM members AS m USING ${jsonRows("v", { id: ids })}
        WHERE m.workspace_id = ${hidden(workspaceId)} AND m.id = v.id RETURNING m.id, m.seq, m.created_at
      ),
      kept AS (
        INSERT INTO member_tombstones (workspace_id, seq, id) SELECT ${workspaceId}, seq, id FROM gone
      ),
      recorded AS (
        INSERT INTO deleted_members (workspace_id, seq, id, created_at, deleted_at)
        SELECT ${workspaceId}, seq, id, created_at, clock_timestamp() FROM gone
      ),
      released AS (
        DELETE FROM member_emails AS e USING gone
        WHERE e.workspace_id = ${hidden(workspaceId)} AND e.member_id = gone.id
      ),
      ${forgetMemberDates(workspaceId, "gone")},
      ${forgetActivities(workspaceId, "gone")}
      SELECT id, seq FROM gone`;
  },

  updateDataSql,

  /** The declared types of the workspace's fields, which every member write checks. */
  fieldTypes: (db: SqlClient, workspaceId: string) => fieldTypeRepo.types(db, workspaceId),

  /** Removes addresses a member no longer has (only a PATCH can drop one). */
  async releaseEmails(tx: SqlClient, workspaceId: string, memberId: string, keep: string[]): Promise<void> {
    await tx.$executeRaw`
      DELETE FROM member_emails
      WHERE workspace_id = ${workspaceId} AND member_id = ${memberId} AND NOT (email_key = ANY(${keep}::text[]))`;
  },

  /** Which member owns each of these case-folded e-mail addresses. */
  async findEmailOwners(tx: SqlClient, workspaceId: string, keys: string[]): Promise<Map<string, string>> {
    if (keys.length === 0) return new Map();
    const rows = await tx.$queryRaw<{ emailKey: string; memberId: string }[]>`
      SELECT e.email_key AS "emailKey", e.member_id AS "memberId"
      FROM ${jsonRows("v", { email_key: keys })}
      JOIN member_emails AS e ON e.workspace_id = ${hidden(workspaceId)} AND e.email_key = v.email_key`;
    return new Map(rows.map((row) => [row.emailKey, row.memberId]));
  },

  /**
   * Creates members in one batch (one creation time, numbers in id order): every member with data
   * (their ids must be new), and a member with no data for each bare id that names nobody yet.
   * Returns the bare ids it created, and the number of every member it created and of every bare
   * id. The caller holds the workspace's member lock, so no other transaction creates members of
   * the workspace meanwhile.
   */
  async insert(
    tx: SqlClient,
    workspaceId: string,
    withData: { id: string; data: MemberData }[],
    bareIds: string[],
  ): Promise<{ createdBare: string[]; seqs: Map<string, number> }> {
    if (withData.length === 0 && bareIds.length === 0) return { createdBare: [], seqs: new Map() };
    // No ON CONFLICT: under the member lock the lookup in `bare` is exact, and a speculative
    // insertion costs a third more per row.
    const [row] = await tx.$queryRaw<{ created: [string, number][] | null; existing: [string, number][] | null }[]>`
      WITH data AS (
        SELECT v.id, v.email, v.fields, ARRAY(SELECT jsonb_array_elements_text(v.alternatives)) AS alternatives, v.folded
        FROM ${dataRows(withData)}
      ),
      bare AS MATERIALIZED (
        SELECT v.id, v.folded_id, m.seq FROM ${jsonRows("v", { id: bareIds, folded_id: bareIds.map(fold) })}
        LEFT JOIN members AS m ON m.workspace_id = ${hidden(workspaceId)} AND m.id = v.id
        WHERE NOT EXISTS (SELECT 1 FROM data WHERE data.id = v.id)
      ),
      fresh AS MATERIALIZED (
        SELECT id, email, fields, alternatives, folded FROM data
        UNION ALL
        SELECT id, NULL, '{}'::jsonb, '{}'::text[],
               jsonb_build_object('id', folded_id, 'email', NULL, 'emails', '[]'::jsonb, 'fields', '{}'::jsonb)
        FROM bare WHERE seq IS NULL
      ), ${numbering(workspaceId)},
      inserted AS (
        INSERT INTO members (workspace_id, id, seq, created_at, email, fields, alternative_emails, folded)
        SELECT ${workspaceId}, f.id, ${numberOf("f")}, tick.at, f.email, f.fields, f.alternatives, f.folded
        FROM fresh AS f CROSS JOIN tick
        RETURNING id, seq, fields
      ),
      ${syncMemberDates(workspaceId, "inserted")}
      SELECT (SELECT json_agg(json_build_array(id, seq)) FROM inserted) AS created,
             (SELECT json_agg(json_build_array(id, seq)) FROM bare WHERE seq IS NOT NULL) AS existing`;
    const dataIds = new Set(withData.map((m) => m.id));
    const created = row?.created ?? [];
    return {
      createdBare: created.flatMap(([id]) => (dataIds.has(id) ? [] : [id])),
      seqs: new Map([...created, ...(row?.existing ?? [])]),
    };
  },

  async updateData(tx: SqlClient, workspaceId: string, members: { id: string; data: MemberData }[]): Promise<void> {
    if (members.length === 0) return;
    await tx.$executeRaw`WITH ${updateDataSql(workspaceId, members)} SELECT 1`;
  },

  /**
   * Records that these members own these addresses. An address claimed by a concurrent request in
   * the meantime retries the transaction, which then sees the new owner.
   */
  async claimEmails(
    tx: SqlClient,
    workspaceId: string,
    claims: { emailKey: string; memberId: string }[],
  ): Promise<void> {
    if (claims.length === 0) return;
    // The member lock makes the owners read before exact, so a plain insert: ON CONFLICT's
    // speculative insertion cost a third more on an import. Should an address be taken anyway,
    // the transaction starts again and reads the owners again.
    try {
      await tx.$executeRaw`
        INSERT INTO member_emails (workspace_id, email_key, member_id)
        SELECT ${workspaceId}, v.email_key, v.member_id
        FROM ${jsonRows("v", { email_key: claims.map((c) => c.emailKey), member_id: claims.map((c) => c.memberId) })}`;
    } catch (error) {
      if (isUniqueViolation(error, "member_emails_pkey", ["workspace_id", "email_key"])) {
        throw new RetryTransaction("an e-mail address was claimed concurrently");
      }
      throw error;
    }
  },
};

export type MemberRepo = typeof memberRepo;

/**
 * Numbers and a creation time for the rows of the CTE `fresh`, taken from the workspace row: the
 * batch gets the next numbers in id order (byte order, as listings sort) and a creation time
 * later than any batch before it, so number order is (createdAt, id) order. The caller holds the
 * workspace's member lock (src/features/membership/write-locks.ts), so batches never interleave.
 */
function numbering(workspaceId: string): Prisma.Sql {
  return Prisma.sql`tick AS (
    UPDATE workspaces SET member_seq = member_seq + (SELECT count(*) FROM fresh)::int,
      member_clock = greatest(date_trunc('milliseconds', clock_timestamp()), member_clock + interval '1 millisecond')
    WHERE workspace_id = ${workspaceId}
    RETURNING member_seq - (SELECT count(*) FROM fresh)::int AS first, member_clock AS at
  )`;
}

const numberOf = (alias: string) =>
  Prisma.sql`tick.first + (row_number() OVER (ORDER BY ${Prisma.raw(alias)}.id COLLATE "C"))::int - 1`;

/**
 * The members' new data written, as WITH items (named updated and date_*), for a statement that
 * writes them beside other things: a PATCH's data rides in the statement that moves its audiences
 * (membership-repo.ts applyMatches), a round trip less. Nothing in that statement reads members.
 */
export function updateDataSql(workspaceId: string, members: { id: string; data: MemberData }[]): Prisma.Sql {
  return Prisma.sql`
    updated AS (
      UPDATE members AS m
      SET email = v.email, fields = v.fields, folded = v.folded, updated_at = now(),
          alternative_emails = ARRAY(SELECT jsonb_array_elements_text(v.alternatives))
      FROM ${dataRows(members)}
      WHERE m.workspace_id = ${hidden(workspaceId)} AND m.id = v.id
      RETURNING m.seq, m.fields
    ),
    ${syncMemberDates(workspaceId, "updated")}`;
}

/**
 * Members with data as rows `v(id, email, fields, alternatives, folded)`, sent as one JSON
 * parameter: a bulk write of 10,000 members costs one string, not five arrays of 10,000 strings
 * each escaped into an array literal (a third of such a request's garbage).
 */
function dataRows(members: { id: string; data: MemberData }[]): Prisma.Sql {
  const rows = members.map((m) => ({
    id: m.id,
    email: m.data.email,
    fields: m.data.fields,
    alternatives: m.data.alternativeEmails,
    folded: foldMember({ id: m.id, ...m.data }),
  }));
  return Prisma.sql`jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
    AS v(id text, email text, fields jsonb, alternatives jsonb, folded jsonb)`;
}

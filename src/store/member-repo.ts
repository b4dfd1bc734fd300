import { Prisma, type PrismaClient } from "../../generated/prisma/client.ts";
import { type Filter, type FoldedMember, fold, foldMember } from "../domain/filter.ts";
import type { MemberData } from "../domain/member-merge.ts";
import type { Tx } from "./database.ts";
import { filterSql } from "./filter-sql.ts";
import { RetryTransaction } from "./pg-errors.ts";

type Reader = PrismaClient | Tx;

export interface MemberRow extends MemberData {
  id: string;
  createdAt: Date;
}

const MEMBER_COLUMNS = Prisma.raw(
  `id, created_at AS "createdAt", email, fields, alternative_emails AS "alternativeEmails"`,
);

/** Bulk member writes: one statement per kind of write, arrays passed as parameters (unnest). */
export const memberRepo = {
  /**
   * The members with these ids, their rows locked in id order. A data change takes FOR NO KEY
   * UPDATE, which still lets other transactions insert rows referencing these members (their
   * foreign-key checks take FOR KEY SHARE): merges and adds need not wait, and cannot deadlock with
   * it. Deleting takes FOR UPDATE, which keeps such inserts out until it commits.
   */
  findForUpdate(
    tx: Tx,
    workspaceId: string,
    ids: string[],
    purpose: "change" | "delete" = "change",
  ): Promise<MemberRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    const lock = purpose === "delete" ? Prisma.sql`FOR UPDATE` : Prisma.sql`FOR NO KEY UPDATE`;
    return tx.$queryRaw<MemberRow[]>`
      SELECT ${MEMBER_COLUMNS} FROM members
      WHERE workspace_id = ${workspaceId} AND id = ANY(${ids}::text[])
      ORDER BY id ${lock}`;
  },

  find(db: Reader, workspaceId: string, id: string): Promise<MemberRow | undefined> {
    return db.$queryRaw<MemberRow[]>`
      SELECT ${MEMBER_COLUMNS} FROM members WHERE workspace_id = ${workspaceId} AND id = ${id}`.then((rows) => rows[0]);
  },

  /** What rule evaluation needs of these members: their folded data and creation time. */
  folded(tx: Tx, workspaceId: string, ids: string[]): Promise<{ id: string; createdAt: Date; folded: FoldedMember }[]> {
    return tx.$queryRaw`
      SELECT id, created_at AS "createdAt", folded FROM members
      WHERE workspace_id = ${workspaceId} AND id = ANY(${ids}::text[])`;
  },

  /** Deletes members (their e-mails, entries and memberships go with them); returns the ids deleted. */
  async delete(tx: Tx, workspaceId: string, ids: string[]): Promise<string[]> {
    const rows = await tx.$queryRaw<{ id: string }[]>`
      DELETE FROM members WHERE workspace_id = ${workspaceId} AND id = ANY(${ids}::text[]) RETURNING id`;
    return rows.map((row) => row.id);
  },

  /** Removes addresses a member no longer has (only a PATCH can drop one). */
  async releaseEmails(tx: Tx, workspaceId: string, memberId: string, keep: string[]): Promise<void> {
    await tx.$executeRaw`
      DELETE FROM member_emails
      WHERE workspace_id = ${workspaceId} AND member_id = ${memberId} AND NOT (email_key = ANY(${keep}::text[]))`;
  },

  /** How many members a filter matches, and the most recent of them. */
  async matching(db: Reader, workspaceId: string, filter: Filter, limit: number) {
    const condition = filterSql(filter);
    const [count] = await db.$queryRaw<{ total: number }[]>`
      SELECT count(*)::int AS total FROM members AS m WHERE m.workspace_id = ${workspaceId} AND ${condition}`;
    const rows = await db.$queryRaw<MemberRow[]>`
      SELECT ${MEMBER_COLUMNS} FROM members AS m WHERE m.workspace_id = ${workspaceId} AND ${condition}
      ORDER BY m.created_at DESC, m.id DESC LIMIT ${limit}`;
    return { totalCount: count?.total ?? 0, rows };
  },

  /** Which member owns each of these case-folded e-mail addresses. */
  async findEmailOwners(tx: Tx, workspaceId: string, keys: string[]): Promise<Map<string, string>> {
    if (keys.length === 0) return new Map();
    const rows = await tx.$queryRaw<{ emailKey: string; memberId: string }[]>`
      SELECT email_key AS "emailKey", member_id AS "memberId" FROM member_emails
      WHERE workspace_id = ${workspaceId} AND email_key = ANY(${keys}::text[])`;
    return new Map(rows.map((row) => [row.emailKey, row.memberId]));
  },

  /** Creates members with no data for the ids that do not exist yet; returns the ids it created. */
  async insertBare(tx: Tx, workspaceId: string, ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await tx.$queryRaw<{ id: string }[]>`
      INSERT INTO members (workspace_id, id, folded)
      SELECT ${workspaceId}, v.id, jsonb_build_object('id', v.folded_id, 'email', NULL, 'emails', '[]'::jsonb, 'fields', '{}'::jsonb)
      FROM unnest(${ids}::text[], ${ids.map(fold)}::text[]) AS v(id, folded_id)
      ON CONFLICT DO NOTHING
      RETURNING id`;
    return rows.map((row) => row.id);
  },

  /** Creates members with data; every id must be new (a concurrent creation retries the transaction). */
  async insertWithData(tx: Tx, workspaceId: string, members: { id: string; data: MemberData }[]): Promise<void> {
    if (members.length === 0) return;
    const [row] = await tx.$queryRaw<{ created: number }[]>`
      WITH inserted AS (
        INSERT INTO members (workspace_id, id, email, fields, alternative_emails, folded)
        SELECT ${workspaceId}, v.id, v.email, v.fields, ARRAY(SELECT jsonb_array_elements_text(v.alternatives)), v.folded
        FROM ${dataRows(members)}
        ON CONFLICT DO NOTHING
        RETURNING 1
      )
      SELECT count(*)::int AS created FROM inserted`;
    if ((row?.created ?? 0) !== members.length) throw new RetryTransaction("a member was created concurrently");
  },

  async updateData(tx: Tx, workspaceId: string, members: { id: string; data: MemberData }[]): Promise<void> {
    if (members.length === 0) return;
    await tx.$executeRaw`
      UPDATE members AS m
      SET email = v.email, fields = v.fields, folded = v.folded, updated_at = now(),
          alternative_emails = ARRAY(SELECT jsonb_array_elements_text(v.alternatives))
      FROM ${dataRows(members)}
      WHERE m.workspace_id = ${workspaceId} AND m.id = v.id`;
  },

  /**
   * Records that these members own these addresses. An address claimed by a concurrent request in
   * the meantime retries the transaction, which then sees the new owner.
   */
  async claimEmails(tx: Tx, workspaceId: string, claims: { emailKey: string; memberId: string }[]): Promise<void> {
    if (claims.length === 0) return;
    const [row] = await tx.$queryRaw<{ claimed: number }[]>`
      WITH claimed AS (
        INSERT INTO member_emails (workspace_id, email_key, member_id)
        SELECT ${workspaceId}, v.email_key, v.member_id
        FROM unnest(${claims.map((c) => c.emailKey)}::text[], ${claims.map((c) => c.memberId)}::text[]) AS v(email_key, member_id)
        ON CONFLICT DO NOTHING
        RETURNING 1
      )
      SELECT count(*)::int AS claimed FROM claimed`;
    if ((row?.claimed ?? 0) !== claims.length) throw new RetryTransaction("an e-mail address was claimed concurrently");
  },
};

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

import { Prisma } from "../../generated/prisma/client.ts";
import type { MemberData } from "../domain/member-merge.ts";
import type { Tx } from "./database.ts";
import { RetryTransaction } from "./pg-errors.ts";

export interface MemberRow extends MemberData {
  id: string;
  createdAt: Date;
}

const MEMBER_COLUMNS = Prisma.raw(
  `id, created_at AS "createdAt", email, fields, alternative_emails AS "alternativeEmails"`,
);

/** Bulk member writes: one statement per kind of write, arrays passed as parameters (unnest). */
export const memberRepo = {
  /** The members with these ids, their rows locked (in id order) against concurrent merges. */
  findForUpdate(tx: Tx, workspaceId: string, ids: string[]): Promise<MemberRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return tx.$queryRaw<MemberRow[]>`
      SELECT ${MEMBER_COLUMNS} FROM members
      WHERE workspace_id = ${workspaceId} AND id = ANY(${ids}::text[])
      ORDER BY id FOR UPDATE`;
  },

  /** Which member owns each of these case-folded e-mail addresses. */
  async findEmailOwners(tx: Tx, workspaceId: string, keys: string[]): Promise<Map<string, string>> {
    if (keys.length === 0) return new Map();
    const rows = await tx.$queryRaw<{ emailKey: string; memberId: string }[]>`
      SELECT email_key AS "emailKey", member_id AS "memberId" FROM member_emails
      WHERE workspace_id = ${workspaceId} AND email_key = ANY(${keys}::text[])`;
    return new Map(rows.map((row) => [row.emailKey, row.memberId]));
  },

  /** Creates members with no data for the ids that do not exist yet; returns how many it created. */
  async insertBare(tx: Tx, workspaceId: string, ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const [row] = await tx.$queryRaw<{ created: number }[]>`
      WITH inserted AS (
        INSERT INTO members (workspace_id, id)
        SELECT ${workspaceId}, id FROM unnest(${ids}::text[]) AS input(id)
        ON CONFLICT DO NOTHING
        RETURNING 1
      )
      SELECT count(*)::int AS created FROM inserted`;
    return row?.created ?? 0;
  },

  /** Creates members with data; every id must be new (a concurrent creation retries the transaction). */
  async insertWithData(tx: Tx, workspaceId: string, members: { id: string; data: MemberData }[]): Promise<void> {
    if (members.length === 0) return;
    const columns = dataColumns(members);
    const [row] = await tx.$queryRaw<{ created: number }[]>`
      WITH inserted AS (
        INSERT INTO members (workspace_id, id, email, fields, alternative_emails)
        SELECT ${workspaceId}, v.id, v.email, v.fields::jsonb, ARRAY(SELECT jsonb_array_elements_text(v.alternatives::jsonb))
        FROM unnest(${columns.ids}::text[], ${columns.emails}::text[], ${columns.fields}::text[], ${columns.alternatives}::text[])
          AS v(id, email, fields, alternatives)
        ON CONFLICT DO NOTHING
        RETURNING 1
      )
      SELECT count(*)::int AS created FROM inserted`;
    if ((row?.created ?? 0) !== members.length) throw new RetryTransaction("a member was created concurrently");
  },

  async updateData(tx: Tx, workspaceId: string, members: { id: string; data: MemberData }[]): Promise<void> {
    if (members.length === 0) return;
    const columns = dataColumns(members);
    await tx.$executeRaw`
      UPDATE members AS m
      SET email = v.email, fields = v.fields::jsonb, updated_at = now(),
          alternative_emails = ARRAY(SELECT jsonb_array_elements_text(v.alternatives::jsonb))
      FROM unnest(${columns.ids}::text[], ${columns.emails}::text[], ${columns.fields}::text[], ${columns.alternatives}::text[])
        AS v(id, email, fields, alternatives)
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

function dataColumns(members: { id: string; data: MemberData }[]) {
  return {
    ids: members.map((m) => m.id),
    emails: members.map((m) => m.data.email),
    fields: members.map((m) => JSON.stringify(m.data.fields)),
    alternatives: members.map((m) => JSON.stringify(m.data.alternativeEmails)),
  };
}

import { Prisma } from "../../../generated/prisma/client.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";
import type { AudienceRow } from "./audience-repo.ts";

/**
 * The row locks writes take, held until their transaction ends. Which lock comes first is decided
 * in one place, src/features/membership/write-locks.ts; nothing else calls these.
 */
export const lockRepo = {
  /**
   * The workspace's member lock: its row, FOR NO KEY UPDATE (which leaves inserts that reference
   * the workspace free). Writes that create, change or delete members, evaluate a rule over them,
   * or lock several audiences take it first, so they run one at a time per workspace.
   */
  async memberWrites(tx: SqlClient, workspaceId: string): Promise<void> {
    await tx.$queryRaw`SELECT 1 FROM workspaces WHERE workspace_id = ${workspaceId} FOR NO KEY UPDATE`;
  },

  /**
   * Reads the audiences and locks their rows: FOR UPDATE for a writer of the audience, FOR SHARE
   * for a reader that needs it stable (the sources of a merge). Rows are locked in id order.
   */
  async audiences(tx: SqlClient, workspaceId: string, ids: string[], mode: "update" | "share"): Promise<AudienceRow[]> {
    const sorted = [...new Set(ids)].sort();
    const lockClause = mode === "update" ? Prisma.sql`FOR UPDATE` : Prisma.sql`FOR SHARE`;
    return tx.$queryRaw<AudienceRow[]>`
      SELECT id, name, filter, is_archived AS "isArchived", member_count AS "memberCount", created_at AS "createdAt"
      FROM audiences
      WHERE workspace_id = ${workspaceId} AND id = ANY(${sorted}::text[])
      ORDER BY id
      ${lockClause}`;
  },

  /**
   * Locks one audience FOR UPDATE, as `audiences`, and reads `alongside` (a scalar subquery) in the
   * same statement: what the write reads next, when nothing it reads can change but under locks
   * the write holds already (write-locks.ts writableReading).
   */
  async audienceReading(
    tx: SqlClient,
    workspaceId: string,
    id: string,
    alongside: Prisma.Sql,
  ): Promise<{ row: AudienceRow | undefined; read: string | undefined }> {
    const [first] = await tx.$queryRaw<(AudienceRow & { read: string | null })[]>`
      SELECT a.id, a.name, a.filter, a."isArchived", a."memberCount", a."createdAt", x.read
      FROM (SELECT ${alongside} AS read) AS x
      LEFT JOIN LATERAL (
        SELECT id, name, filter, is_archived AS "isArchived", member_count AS "memberCount", created_at AS "createdAt"
        FROM audiences WHERE workspace_id = ${workspaceId} AND id = ${id} FOR UPDATE
      ) AS a ON true`;
    const read = first?.read ?? undefined;
    if (!first || first.id === null) return { row: undefined, read };
    const { read: _, ...row } = first;
    return { row, read };
  },

  /**
   * The same lock (FOR UPDATE, id order) as a query for a statement that writes these audiences:
   * membership-repo.ts runs it before that statement reads or writes anything (lockedFirst).
   */
  audiencesForUpdateSql(workspaceId: string, ids: string[]): Prisma.Sql {
    const sorted = [...new Set(ids)].sort();
    return Prisma.sql`
      SELECT id FROM audiences WHERE workspace_id = ${workspaceId} AND id = ANY(${sorted}::text[]) ORDER BY id FOR UPDATE`;
  },

  /** Locks every audience of the workspace, archived ones too, in id order; returns their ids. */
  async allAudiences(tx: SqlClient, workspaceId: string): Promise<string[]> {
    const rows = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM audiences WHERE workspace_id = ${workspaceId} ORDER BY id FOR UPDATE`;
    return rows.map((row) => row.id);
  },

  /** Locks the audience if its rule matches are still outdated (no other process refreshed them). */
  async ruleOutdated(
    tx: SqlClient,
    workspaceId: string,
    id: string,
  ): Promise<Pick<AudienceRow, "id" | "filter"> | undefined> {
    const [row] = await tx.$queryRaw<Pick<AudienceRow, "id" | "filter">[]>`
      SELECT id, filter FROM audiences WHERE workspace_id = ${workspaceId} AND id = ${id} AND rule_outdated FOR UPDATE`;
    return row;
  },
};

export type LockRepo = typeof lockRepo;

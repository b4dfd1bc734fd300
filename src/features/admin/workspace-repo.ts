import { Prisma } from "../../../generated/prisma/client.ts";

import type { SqlClient } from "../../platform/db/sql-client.ts";

export interface WorkspaceRow {
  id: string;
  name: string;
  createdAt: Date;
}

export const workspaceRepo = {
  /** Creates the workspace with its empty event feed, in one statement. */
  async create(tx: SqlClient, workspace: { id: string; name: string }): Promise<WorkspaceRow> {
    const [row] = await tx.$queryRaw<WorkspaceRow[]>`
      WITH created AS (
        INSERT INTO workspaces (workspace_id, name) VALUES (${workspace.id}, ${workspace.name})
        RETURNING workspace_id, name, created_at
      ), head AS (
        INSERT INTO event_heads (workspace_id) SELECT workspace_id FROM created
      )
      SELECT workspace_id AS id, name, created_at AS "createdAt" FROM created`;
    return row as WorkspaceRow;
  },

  list(db: SqlClient): Promise<WorkspaceRow[]> {
    return db.$queryRaw`
      SELECT workspace_id AS id, name, created_at AS "createdAt" FROM workspaces ORDER BY created_at, workspace_id`;
  },

  /** The oldest `limit` workspaces and how many there are in all (what a restart prints). */
  async firstAndCount(db: SqlClient, limit: number): Promise<{ first: WorkspaceRow[]; count: number }> {
    const first = await db.$queryRaw<WorkspaceRow[]>`
      SELECT workspace_id AS id, name, created_at AS "createdAt" FROM workspaces
      ORDER BY created_at, workspace_id LIMIT ${limit}`;
    if (first.length < limit) return { first, count: first.length };
    const [row] = await db.$queryRaw<{ count: number }[]>`SELECT count(*)::int AS count FROM workspaces`;
    return { first, count: row?.count ?? first.length };
  },

  async exists(db: SqlClient, id: string): Promise<boolean> {
    const rows = await db.$queryRaw<unknown[]>`SELECT 1 FROM workspaces WHERE workspace_id = ${id}`;
    return rows.length > 0;
  },

  async isEmpty(db: SqlClient): Promise<boolean> {
    const rows = await db.$queryRaw<unknown[]>`SELECT 1 FROM workspaces LIMIT 1`;
    return rows.length === 0;
  },

  /**
   * Held until the transaction ends by whoever creates the first-start workspace, so that two
   * processes starting on one empty database create one workspace, not two. Transaction-scoped,
   * so PgBouncer in transaction mode cannot leave it behind on a pooled connection.
   */
  async lockFirstStart(tx: SqlClient): Promise<void> {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('audience-service first start'))`;
  },
};

export type WorkspaceRepo = typeof workspaceRepo;

export interface ApiKeyRow {
  workspaceId: string;
  id: string;
  name: string;
  secretHash: Uint8Array;
  createdAt: Date;
  revokedAt: Date | null;
}

const KEY_ROW = Prisma.sql`
  workspace_id AS "workspaceId", id, name, secret_hash AS "secretHash", created_at AS "createdAt", revoked_at AS "revokedAt"`;

export const apiKeyRepo = {
  async create(
    tx: SqlClient,
    key: { workspaceId: string; id: string; name: string; secretHash: Uint8Array },
  ): Promise<ApiKeyRow> {
    const [row] = await tx.$queryRaw<ApiKeyRow[]>`
      INSERT INTO api_keys (workspace_id, id, name, secret_hash)
      VALUES (${key.workspaceId}, ${key.id}, ${key.name}, ${key.secretHash})
      RETURNING ${KEY_ROW}`;
    return row as ApiKeyRow;
  },

  async find(db: SqlClient, workspaceId: string, id: string): Promise<ApiKeyRow | null> {
    const [row] = await db.$queryRaw<ApiKeyRow[]>`
      SELECT ${KEY_ROW} FROM api_keys WHERE workspace_id = ${workspaceId} AND id = ${id}`;
    return row ?? null;
  },

  /** Marks the key revoked (keeping the first revocation time); false when there is no such key. */
  async revoke(tx: SqlClient, workspaceId: string, id: string): Promise<boolean> {
    const count = await tx.$executeRaw`
      UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
      WHERE workspace_id = ${workspaceId} AND id = ${id}`;
    return count > 0;
  },
};

export type ApiKeyRepo = typeof apiKeyRepo;

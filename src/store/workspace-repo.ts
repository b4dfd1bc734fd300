import type { PrismaClient } from "../../generated/prisma/client.ts";
import type { Tx } from "./database.ts";

type Reader = PrismaClient | Tx;

export interface WorkspaceRow {
  id: string;
  name: string;
  createdAt: Date;
}

export const workspaceRepo = {
  /** Creates the workspace with its empty event feed. */
  create(tx: Reader, workspace: { id: string; name: string }): Promise<WorkspaceRow> {
    return tx.workspace.create({
      data: { ...workspace, eventHead: { create: {} } },
      select: { id: true, name: true, createdAt: true },
    });
  },

  list(db: Reader): Promise<WorkspaceRow[]> {
    return db.workspace.findMany({ orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  },

  exists(db: Reader, id: string): Promise<boolean> {
    return db.workspace.count({ where: { id } }).then((n) => n > 0);
  },

  async isEmpty(db: Reader): Promise<boolean> {
    return (await db.workspace.findFirst({ select: { id: true } })) === null;
  },

  /**
   * Held until the transaction ends by whoever creates the first-start workspace, so that two
   * processes starting on one empty database create one workspace, not two. Transaction-scoped,
   * so PgBouncer in transaction mode cannot leave it behind on a pooled connection.
   */
  async lockFirstStart(tx: Tx): Promise<void> {
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

export const apiKeyRepo = {
  create(
    tx: Reader,
    key: { workspaceId: string; id: string; name: string; secretHash: Uint8Array },
  ): Promise<ApiKeyRow> {
    return tx.apiKey.create({ data: { ...key, secretHash: Buffer.from(key.secretHash) } });
  },

  find(db: Reader, workspaceId: string, id: string): Promise<ApiKeyRow | null> {
    return db.apiKey.findUnique({ where: { workspaceId_id: { workspaceId, id } } });
  },

  /** Marks the key revoked (keeping the first revocation time); false when there is no such key. */
  async revoke(tx: Reader, workspaceId: string, id: string): Promise<boolean> {
    const key = await tx.apiKey.findUnique({ where: { workspaceId_id: { workspaceId, id } } });
    if (key === null) return false;
    if (key.revokedAt === null) {
      await tx.apiKey.update({ where: { workspaceId_id: { workspaceId, id } }, data: { revokedAt: new Date() } });
    }
    return true;
  },
};

export type ApiKeyRepo = typeof apiKeyRepo;

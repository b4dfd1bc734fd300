import type { PrismaClient } from "../../generated/prisma/client.ts";
import type { Tx } from "./database.ts";

type Reader = PrismaClient | Tx;

export interface WorkspaceRow {
  id: string;
  name: string;
  createdAt: Date;
}

export const workspaceRepo = {
  create(tx: Reader, workspace: { id: string; name: string }): Promise<WorkspaceRow> {
    return tx.workspace.create({ data: workspace });
  },

  list(db: Reader): Promise<WorkspaceRow[]> {
    return db.workspace.findMany({ orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  },

  exists(db: Reader, id: string): Promise<boolean> {
    return db.workspace.count({ where: { id } }).then((n) => n > 0);
  },

  /**
   * Takes the workspace's member lock for the rest of the transaction. Every write that creates,
   * changes or deletes members, evaluates a rule over them, or merges audiences takes it first:
   * such writes run one at a time per workspace, so member numbers are handed out in order, a rule
   * never misses a member created meanwhile, and they cannot deadlock with each other. (FOR NO KEY
   * UPDATE leaves inserts that reference the workspace free.)
   */
  async lockMemberWrites(tx: Tx, workspaceId: string): Promise<void> {
    await tx.$queryRaw`SELECT 1 FROM workspaces WHERE workspace_id = ${workspaceId} FOR NO KEY UPDATE`;
  },

  async isEmpty(db: Reader): Promise<boolean> {
    return (await db.workspace.findFirst({ select: { id: true } })) === null;
  },
};

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

import type { components } from "../../../generated/api.d.ts";
import { NotFoundError } from "../../domain/errors.ts";
import { newId } from "../../domain/ids.ts";
import { normalizeName } from "../../domain/names.ts";
import type { Store } from "../../platform/db/database.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";
import { type AuthService, newApiKey } from "./auth-service.ts";
import type { ApiKeyRepo, WorkspaceRepo } from "./workspace-repo.ts";

type Schemas = components["schemas"];

const workspaceNotFound = (id: string) => new NotFoundError("workspace_not_found", `No workspace ${id}.`);

export interface AdminServiceDeps {
  store: Pick<Store, "db" | "transaction">;
  auth: Pick<AuthService, "forget">;
  workspaces: Pick<WorkspaceRepo, "create" | "list" | "firstAndCount" | "exists" | "isEmpty" | "lockFirstStart">;
  apiKeys: Pick<ApiKeyRepo, "create" | "revoke">;
}

export function createAdminService({ store, auth, workspaces, apiKeys }: AdminServiceDeps) {
  const toWorkspace = (row: { id: string; name: string; createdAt: Date }): Schemas["Workspace"] => ({
    id: row.id,
    name: row.name,
    createdAt: row.createdAt.toISOString(),
  });

  const createKey = async (tx: SqlClient, workspaceId: string, name: string): Promise<Schemas["CreatedApiKey"]> => {
    const id = newId("key");
    const { key, secretHash } = newApiKey(workspaceId, id);
    const row = await apiKeys.create(tx, { workspaceId, id, name: name.trim(), secretHash });
    return { id: row.id, name: row.name, key, createdAt: row.createdAt.toISOString() };
  };

  const service = {
    async createWorkspace(rawName: string): Promise<Schemas["Workspace"]> {
      const row = await workspaces.create(store.db, { id: newId("ws"), name: normalizeName(rawName) });
      return toWorkspace(row);
    },

    async listWorkspaces(): Promise<Schemas["WorkspaceList"]> {
      return { results: (await workspaces.list(store.db)).map(toWorkspace) };
    },

    async createApiKey(workspaceId: string, name = "default"): Promise<Schemas["CreatedApiKey"]> {
      return store.transaction(async (tx) => {
        if (!(await workspaces.exists(tx, workspaceId))) throw workspaceNotFound(workspaceId);
        return createKey(tx, workspaceId, name);
      });
    },

    async revokeApiKey(workspaceId: string, keyId: string): Promise<void> {
      const revoked = await store.transaction((tx) => apiKeys.revoke(tx, workspaceId, keyId));
      if (!revoked) throw new NotFoundError("api_key_not_found", `No API key ${keyId} in workspace ${workspaceId}.`);
      auth.forget(workspaceId, keyId);
    },

    /** The oldest `limit` workspaces and the count of all: what a restart prints. */
    async someWorkspaces(limit: number): Promise<{ first: Schemas["Workspace"][]; count: number }> {
      const { first, count } = await workspaces.firstAndCount(store.db, limit);
      return { first: first.map(toWorkspace), count };
    },

    /**
     * On a database with no workspace, creates one with an API key so that a new user can make a
     * request at once; returns them (the key is shown only this once), or null when there is data.
     */
    async bootstrap(): Promise<{ workspaceId: string; apiKey: string } | null> {
      if (!(await workspaces.isEmpty(store.db))) return null;
      // Another process may be starting on the same empty database: decide under a lock.
      return store.transaction(async (tx) => {
        await workspaces.lockFirstStart(tx);
        if (!(await workspaces.isEmpty(tx))) return null;
        const workspace = await workspaces.create(tx, { id: newId("ws"), name: "Default workspace" });
        const key = await createKey(tx, workspace.id, "bootstrap");
        return { workspaceId: workspace.id, apiKey: key.key };
      });
    },
  };
  return service;
}

export type AdminService = ReturnType<typeof createAdminService>;

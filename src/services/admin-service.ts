import type { components } from "../../generated/api.d.ts";
import { NotFoundError } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import { normalizeName } from "../domain/names.ts";
import type { Store } from "../store/database.ts";
import { apiKeyRepo, workspaceRepo } from "../store/workspace-repo.ts";
import { type AuthService, newApiKey } from "./auth-service.ts";

type Schemas = components["schemas"];

const workspaceNotFound = (id: string) => new NotFoundError("workspace_not_found", `No workspace ${id}.`);

export function createAdminService({ store, auth }: { store: Store; auth: AuthService }) {
  const toWorkspace = (row: { id: string; name: string; createdAt: Date }): Schemas["Workspace"] => ({
    id: row.id,
    name: row.name,
    createdAt: row.createdAt.toISOString(),
  });

  const service = {
    async createWorkspace(rawName: string): Promise<Schemas["Workspace"]> {
      const row = await workspaceRepo.create(store.db, { id: newId("ws"), name: normalizeName(rawName) });
      return toWorkspace(row);
    },

    async listWorkspaces(): Promise<Schemas["WorkspaceList"]> {
      return { results: (await workspaceRepo.list(store.db)).map(toWorkspace) };
    },

    async createApiKey(workspaceId: string, name = "default"): Promise<Schemas["CreatedApiKey"]> {
      return store.transaction(async (tx) => {
        if (!(await workspaceRepo.exists(tx, workspaceId))) throw workspaceNotFound(workspaceId);
        const id = newId("key");
        const { key, secretHash } = newApiKey(workspaceId, id);
        const row = await apiKeyRepo.create(tx, { workspaceId, id, name: name.trim(), secretHash });
        return { id: row.id, name: row.name, key, createdAt: row.createdAt.toISOString() };
      });
    },

    async revokeApiKey(workspaceId: string, keyId: string): Promise<void> {
      const revoked = await store.transaction((tx) => apiKeyRepo.revoke(tx, workspaceId, keyId));
      if (!revoked) throw new NotFoundError("api_key_not_found", `No API key ${keyId} in workspace ${workspaceId}.`);
      auth.forget(workspaceId, keyId);
    },

    /**
     * On a database with no workspace, creates one with an API key so that a new user can make a
     * request at once; returns them (the key is shown only this once), or null when there is data.
     */
    async bootstrap(): Promise<{ workspaceId: string; apiKey: string } | null> {
      if (!(await workspaceRepo.isEmpty(store.db))) return null;
      const workspace = await service.createWorkspace("Default workspace");
      const key = await service.createApiKey(workspace.id, "bootstrap");
      return { workspaceId: workspace.id, apiKey: key.key };
    },
  };
  return service;
}

export type AdminService = ReturnType<typeof createAdminService>;

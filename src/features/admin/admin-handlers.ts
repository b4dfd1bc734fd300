import type { Handlers } from "../../contract/handler-types.ts";
import type { AdminService } from "./admin-service.ts";

/** Workspaces and API keys: the admin token's operations. */
export function createAdminHandlers({ admin }: { admin: AdminService }) {
  return {
    async createWorkspace(request, reply) {
      reply.code(201);
      return admin.createWorkspace(request.body.name);
    },
    listWorkspaces: () => admin.listWorkspaces(),
    async createApiKey(request, reply) {
      reply.code(201);
      return admin.createApiKey(request.params.workspaceId, request.body?.name);
    },
    async revokeApiKey(request, reply) {
      await admin.revokeApiKey(request.params.workspaceId, request.params.keyId);
      reply.code(204);
    },
  } satisfies Partial<Handlers>;
}

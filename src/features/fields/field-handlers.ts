import type { Handlers } from "../../contract/handler-types.ts";
import type { FieldService } from "./field-service.ts";

/** The declared types of the workspace's custom fields. */
export function createFieldHandlers({ fields }: { fields: FieldService }) {
  return {
    listFields: (request) => fields.list(request.params.workspaceId),
    declareField: (request) => fields.declare(request.params.workspaceId, request.params.fieldKey, request.body.type),
    async deleteField(request, reply) {
      await fields.remove(request.params.workspaceId, request.params.fieldKey);
      reply.code(204);
    },
  } satisfies Partial<Handlers>;
}

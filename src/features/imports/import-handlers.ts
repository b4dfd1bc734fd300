import type { Handlers } from "../../contract/handler-types.ts";
import type { ImportService } from "./import-service.ts";

/** CSV import jobs. */
export function createImportHandlers({ imports }: { imports: ImportService }) {
  return {
    async createImport(request, reply) {
      const { workspaceId } = request.params;
      const declared = request.headers["content-length"];
      const job = await imports.create(
        workspaceId,
        request.query,
        // Not destroyed when the upload stops early (a bad file): the answer must still go out.
        request.body.iterator({ destroyOnReturn: false }),
        declared === undefined ? undefined : Number(declared),
      );
      reply.code(202).header("location", `/v0/workspaces/${workspaceId}/imports/${job.id}`);
      return job;
    },
    listImports: (request) => imports.list(request.params.workspaceId, request.query),
    getImport: (request) => imports.get(request.params.workspaceId, request.params.importId),
    cancelImport: (request) => imports.cancel(request.params.workspaceId, request.params.importId),
  } satisfies Partial<Handlers>;
}

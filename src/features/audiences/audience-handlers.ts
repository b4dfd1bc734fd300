import type { Handlers } from "../../contract/handler-types.ts";
import { fileFormat, keyOf, type MemberFiles, sendFile, sentQuery } from "../../platform/http/file-responses.ts";
import type { AudienceMemberService } from "./audience-member-service.ts";
import type { AudienceService } from "./audience-service.ts";

export interface AudienceHandlerDeps {
  audiences: AudienceService;
  audienceMembers: AudienceMemberService;
  /** An audience's members as a file (the exports feature). */
  memberFiles: MemberFiles;
}

/** Audiences, their members and their rules. */
export function createAudienceHandlers({ audiences, audienceMembers, memberFiles }: AudienceHandlerDeps) {
  return {
    async createAudience(request, reply) {
      reply.code(201);
      return audiences.create(request.params.workspaceId, request.body.name);
    },
    getAudience: (request) =>
      audiences.get(request.params.workspaceId, request.params.audienceId, request.query?.include),
    listAudiences: (request) => audiences.list(request.params.workspaceId, request.query),
    async archiveAudience(request, reply) {
      await audiences.archive(request.params.workspaceId, request.params.audienceId);
      reply.code(204);
    },
    restoreAudience: (request) => audiences.restore(request.params.workspaceId, request.params.audienceId),
    updateAudience: (request) =>
      audiences.rename(request.params.workspaceId, request.params.audienceId, request.body.name),
    async mergeAudiences(request, reply) {
      reply.code(201);
      return audiences.merge(request.params.workspaceId, request.body);
    },
    async snapshotAudience(request, reply) {
      reply.code(201);
      return audiences.snapshot(request.params.workspaceId, request.params.audienceId, request.body.name);
    },

    addAudienceMembers: (request) =>
      audienceMembers.add(request.params.workspaceId, request.params.audienceId, request.body),
    removeAudienceMembers: (request) =>
      audienceMembers.remove(request.params.workspaceId, request.params.audienceId, request.body),
    // With Accept: text/csv or application/x-ndjson, every member as a file instead of a page.
    async listAudienceMembers(request, reply) {
      const { workspaceId, audienceId } = request.params;
      const format = fileFormat(request, reply);
      if (!format) return audienceMembers.list(workspaceId, audienceId, request.query);
      const { asOf, ...sent } = sentQuery(request);
      const bound =
        asOf === undefined ? undefined : await audienceMembers.fileBound(workspaceId, audienceId, asOf, sent.search);
      const file = await memberFiles.open(workspaceId, format, { ...sent, audienceId }, keyOf(request), bound);
      return sendFile(reply, format, `members-${audienceId}`, file, memberFiles.writeTimeoutMs);
    },

    getAudienceFilter: (request) => audiences.getFilter(request.params.workspaceId, request.params.audienceId),
    setAudienceFilter: (request) =>
      audiences.setFilter(request.params.workspaceId, request.params.audienceId, request.body.filter),
    previewAudience: (request) => audiences.preview(request.params.workspaceId, request.body),
  } satisfies Partial<Handlers>;
}

import type { Handlers } from "../../contract/handler-types.ts";
import { fileFormat, type OpenMemberFile, sendFile, sentQuery } from "../../platform/http/file-responses.ts";
import type { MemberService } from "./member-service.ts";

/** The workspace's members. */
export function createMemberHandlers({
  members,
  openMemberFile,
}: {
  members: MemberService;
  openMemberFile: OpenMemberFile;
}) {
  return {
    upsertMembers: (request) => members.upsert(request.params.workspaceId, request.body),
    // With Accept: text/csv or application/x-ndjson, every member as a file instead of a page.
    async listMembers(request, reply) {
      const format = fileFormat(request, reply);
      if (!format) return members.list(request.params.workspaceId, request.query);
      const query = sentQuery(request);
      const file = await openMemberFile(request.params.workspaceId, format, query);
      return sendFile(reply, format, query.audienceId ? `members-${query.audienceId}` : "members", file);
    },
    getMember: (request) => members.get(request.params.workspaceId, request.params.memberId),
    updateMember: (request) => members.update(request.params.workspaceId, request.params.memberId, request.body),
    deleteMembers: (request) => members.remove(request.params.workspaceId, request.body),
    listMemberAudiences: (request) => members.audiences(request.params.workspaceId, request.params.memberId),
  } satisfies Partial<Handlers>;
}

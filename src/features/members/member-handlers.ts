import type { Handlers } from "../../contract/handler-types.ts";
import { fileFormat, keyOf, type MemberFiles, sendFile, sentQuery } from "../../platform/http/file-responses.ts";
import type { MemberService } from "./member-service.ts";

/** The workspace's members. */
export function createMemberHandlers({ members, memberFiles }: { members: MemberService; memberFiles: MemberFiles }) {
  return {
    upsertMembers: (request) => members.upsert(request.params.workspaceId, request.body),
    // With Accept: text/csv or application/x-ndjson, every member as a file instead of a page.
    async listMembers(request, reply) {
      const format = fileFormat(request, reply);
      if (!format) return members.list(request.params.workspaceId, request.query);
      const query = sentQuery(request);
      const file = await memberFiles.open(request.params.workspaceId, format, query, keyOf(request));
      const name = query.audienceId ? `members-${query.audienceId}` : "members";
      return sendFile(reply, format, name, file, memberFiles.writeTimeoutMs);
    },
    getMember: (request) => members.get(request.params.workspaceId, request.params.memberId),
    updateMember: (request) => members.update(request.params.workspaceId, request.params.memberId, request.body),
    deleteMembers: (request) => members.remove(request.params.workspaceId, request.body),
    listMemberAudiences: (request) =>
      members.audiences(request.params.workspaceId, request.params.memberId, request.query?.asOf),
  } satisfies Partial<Handlers>;
}

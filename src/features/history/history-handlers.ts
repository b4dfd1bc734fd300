import type { Handlers } from "../../contract/handler-types.ts";
import type { RecordService } from "./record-service.ts";

/**
 * Who came and went. The members of an audience and the audiences of a member at an instant are
 * the `asOf` of listAudienceMembers and listMemberAudiences, whose features call this one's service
 * through the composition root.
 */
export function createHistoryHandlers({ record }: { record: RecordService }) {
  return {
    listAudienceChanges: (request) =>
      record.changes(request.params.workspaceId, request.params.audienceId, request.query ?? {}),
  } satisfies Partial<Handlers>;
}

import type { Handlers } from "../../contract/handler-types.ts";
import type { ActivityService } from "./activity-service.ts";

/** What members did: ingest, a member's timeline, the workspace's types. */
export function createActivityHandlers({ activities }: { activities: ActivityService }) {
  return {
    ingestActivities: (request) => activities.ingest(request.params.workspaceId, request.body),
    listMemberActivities: (request) =>
      activities.timeline(request.params.workspaceId, request.params.memberId, request.query),
    listActivityTypes: (request) => activities.types(request.params.workspaceId),
  } satisfies Partial<Handlers>;
}

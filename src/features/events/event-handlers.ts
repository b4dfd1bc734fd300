import type { Handlers } from "../../contract/handler-types.ts";
import type { EventFeed } from "./event-feed-service.ts";

/** The event feed. */
export function createEventHandlers({ events }: { events: EventFeed }) {
  return {
    listEvents: (request) => events.list(request.params.workspaceId, request.query),
    getLatestEventCursor: (request) => events.latest(request.params.workspaceId),
  } satisfies Partial<Handlers>;
}

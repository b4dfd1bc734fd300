import type { components } from "@audience-service/client";

type EventType = components["schemas"]["EventType"];

/** Every type of the feed's events, in the contract's order; the compiler checks the list is whole. */
const ALL: Record<EventType, true> = {
  "audience.created": true,
  "audience.renamed": true,
  "audience.archived": true,
  "audience.restored": true,
  "audience.filter_changed": true,
  "audience.merged": true,
  "audience.members_changed": true,
  "members.created": true,
  "members.updated": true,
  "members.deleted": true,
};

export const EVENT_TYPES = Object.keys(ALL) as EventType[];

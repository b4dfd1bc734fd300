import type { Event } from "@audience-service/client";

const plural = (count: number, one: string, many = `${one}s`) =>
  `${count.toLocaleString()} ${count === 1 ? one : many}`;

/** The audience an event is about, if any. */
export function audienceOf(event: Event): string | undefined {
  return "audienceId" in event.data ? event.data.audienceId : undefined;
}

/** The most members an event names; one about more says how many. */
export const NAMED_PER_EVENT = 3;

/** The members an event names, when it is about few enough of them (a deleted member's data are gone). */
export function membersNamedBy(event: Event): string[] {
  const ids =
    event.type === "members.created"
      ? event.data.memberIds
      : event.type === "members.updated"
        ? event.data.members.map((member) => member.id)
        : event.type === "audience.members_changed"
          ? [...event.data.entered, ...event.data.left]
          : [];
  return ids.length <= NAMED_PER_EVENT ? ids : [];
}

/**
 * What an event says, in a few words a person reads at a glance. `nameOf` names a member (its
 * e-mail address, else its id) where the event is about few (membersNamedBy).
 */
export function eventSummary(event: Event, nameOf?: (memberId: string) => string): string {
  const named = membersNamedBy(event);
  const who = (ids: string[]) => (nameOf && named.length > 0 ? ids.map(nameOf).join(", ") : undefined);
  switch (event.type) {
    case "audience.created":
      return `created “${event.data.name}”`;
    case "audience.renamed":
      return `renamed “${event.data.previousName}” → “${event.data.name}”`;
    case "audience.archived":
      return "archived";
    case "audience.restored":
      return "restored";
    case "audience.filter_changed":
      return event.data.filter ? "rule changed" : "rule removed";
    case "audience.merged":
      return `${plural(event.data.sourceAudienceIds.length, "audience")} merged into it`;
    case "audience.members_changed": {
      const { entered, left } = event.data;
      const side = (ids: string[]) => (ids.length > 0 && who(ids) ? ` (${who(ids)})` : "");
      return `+${entered.length.toLocaleString()} entered${side(entered)}, −${left.length.toLocaleString()} left${side(left)} (${event.data.reason.replace("_", " ")})`;
    }
    case "members.created":
      return `${who(event.data.memberIds) ?? plural(event.data.memberIds.length, "member")} created`;
    case "members.updated": {
      const fields = [...new Set(event.data.members.flatMap((member) => member.changed))].sort();
      const ids = event.data.members.map((member) => member.id);
      return `${who(ids) ?? plural(event.data.members.length, "member")} updated${fields.length ? ` (${fields.join(", ")})` : ""}`;
    }
    case "members.deleted":
      return `${plural(event.data.memberIds.length, "member")} deleted`;
  }
}

import type { Event } from "@audience-service/client";

const plural = (count: number, one: string, many = `${one}s`) =>
  `${count.toLocaleString()} ${count === 1 ? one : many}`;

/** The audience an event is about, if any. */
export function audienceOf(event: Event): string | undefined {
  return "audienceId" in event.data ? event.data.audienceId : undefined;
}

/** What an event says, in a few words a person reads at a glance. */
export function eventSummary(event: Event): string {
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
    case "audience.members_changed":
      return `+${event.data.entered.length.toLocaleString()} entered, −${event.data.left.length.toLocaleString()} left (${event.data.reason.replace("_", " ")})`;
    case "members.created":
      return `${plural(event.data.memberIds.length, "member")} created`;
    case "members.updated": {
      const fields = [...new Set(event.data.members.flatMap((member) => member.changed))].sort();
      return `${plural(event.data.members.length, "member")} updated${fields.length ? ` (${fields.join(", ")})` : ""}`;
    }
    case "members.deleted":
      return `${plural(event.data.memberIds.length, "member")} deleted`;
  }
}

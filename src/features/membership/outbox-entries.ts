import type { components } from "../../../generated/api.d.ts";
import { assertNever } from "../../domain/assert-never.ts";
import { type MemberData, NAMED_FIELDS } from "../../domain/member-merge.ts";
import type { ChangeReason, MemberSet } from "./member-set.ts";

export type EventType = components["schemas"]["EventType"];
export type Event = components["schemas"]["Event"];

/** The most ids (or members) one event carries; a larger change is several consecutive events. */
export const MAX_IDS_PER_EVENT = 1000;

/** The events that name members by a member set in the outbox (their numbers, not their ids). */
type SetEventType = "audience.members_changed" | "members.created";

/** An event type whose outbox entry is its event's data as the contract declares it. */
type PlainEntry = {
  [T in Exclude<EventType, SetEventType>]: { type: T } & Extract<Event, { type: T }>["data"];
}[Exclude<EventType, SetEventType>];

/**
 * What a write records of one change, in its own transaction (the outbox), for every event type of
 * the contract: member sets are kept as member numbers (the relay names the members when it
 * publishes the entry as events); every other entry is its event's data.
 */
export type OutboxEntry =
  | { type: "audience.members_changed"; audienceId: string; reason: ChangeReason; entered: MemberSet; left: MemberSet }
  | { type: "members.created"; created: MemberSet }
  | PlainEntry;

/** An event before the relay gives it an id and a sequence. */
export interface EventDraft {
  type: EventType;
  audienceId: string | null;
  data: Record<string, unknown>;
}

/** The pieces of `items`, in order, of at most `size` each. */
export function batches<T>(items: readonly T[], size = MAX_IDS_PER_EVENT): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * The events of a membership change: entered, then left, at most MAX_IDS_PER_EVENT ids per event
 * in all, so a change of 600,000 members is 600 consecutive events.
 */
export function membersChangedEvents(
  audienceId: string,
  reason: ChangeReason,
  entered: readonly string[],
  left: readonly string[],
): EventDraft[] {
  const ids = [...entered.map((id) => ["entered", id] as const), ...left.map((id) => ["left", id] as const)];
  return batches(ids).map((batch) => ({
    type: "audience.members_changed",
    audienceId,
    data: {
      audienceId,
      entered: batch.flatMap(([part, id]) => (part === "entered" ? [id] : [])),
      left: batch.flatMap(([part, id]) => (part === "left" ? [id] : [])),
      reason,
    },
  }));
}

/** The events of an entry that carries no member set (its ids, if any, are in the entry). */
export function plainEvents(entry: Exclude<OutboxEntry, { type: "audience.members_changed" | "members.created" }>) {
  switch (entry.type) {
    case "members.updated":
      return batches(entry.members).map((members) => draft("members.updated", null, { members }));
    case "members.deleted":
      return batches(entry.memberIds).map((memberIds) => draft("members.deleted", null, { memberIds }));
    case "audience.created":
    case "audience.renamed":
    case "audience.archived":
    case "audience.restored":
    case "audience.filter_changed":
    case "audience.merged": {
      const { type, ...data } = entry;
      return [draft(type, entry.audienceId, data)];
    }
    default:
      return assertNever(entry, "outbox entry");
  }
}

/** members.created events for these ids. */
export const createdEvents = (memberIds: readonly string[]): EventDraft[] =>
  batches(memberIds).map((ids) => draft("members.created", null, { memberIds: ids }));

const draft = (type: EventType, audienceId: string | null, data: Record<string, unknown>): EventDraft => ({
  type,
  audienceId,
  data,
});

/**
 * What differs between a member's data before and after a write, as members.updated names it:
 * `email`, `alternativeEmails`, `fields.<key>` (a named field counts as "" when absent).
 */
export function changedKeys(before: MemberData, after: MemberData): string[] {
  const changed: string[] = [];
  if (before.email !== after.email) changed.push("email");
  const sameAlternatives =
    before.alternativeEmails.length === after.alternativeEmails.length &&
    before.alternativeEmails.every((email, i) => email === after.alternativeEmails[i]);
  if (!sameAlternatives) changed.push("alternativeEmails");
  const value = (fields: Record<string, string>, key: string) =>
    fields[key] ?? ((NAMED_FIELDS as readonly string[]).includes(key) ? "" : undefined);
  const keys = new Set([...Object.keys(before.fields), ...Object.keys(after.fields)]);
  for (const key of [...keys].sort()) {
    if (value(before.fields, key) !== value(after.fields, key)) changed.push(`fields.${key}`);
  }
  return changed;
}

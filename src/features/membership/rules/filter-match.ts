import { LRUCache } from "lru-cache";
import { durationBefore, parseDuration } from "../../../domain/durations.ts";
import { type FieldTypes, parseDate, parseNumber } from "../../../domain/field-types.ts";
import { type Condition, type Filter, type FoldedMember, fold, kindOf } from "./filter.ts";

/** What evaluating a rule needs besides the member: field types, the time, other audiences. */
export interface MatchContext {
  types: FieldTypes;
  /** The instant relative-time conditions are evaluated at (milliseconds since the epoch). */
  now: number;
  /** Whether the member is a member of that audience (audience conditions). */
  inAudience(audienceId: string): boolean;
}

/**
 * Evaluates a filter in process; src/features/membership/filter-sql.ts compiles the same semantics
 * to SQL, and the property tests hold the two to the same answers on every store.
 */
export function matches(filter: Filter | null, member: FoldedMember, createdAt: Date, context: MatchContext): boolean {
  if (filter === null) return false;
  if ("all" in filter) return filter.all.every((f) => matches(f, member, createdAt, context));
  if ("any" in filter) return filter.any.some((f) => matches(f, member, createdAt, context));
  if ("not" in filter) return !matches(filter.not, member, createdAt, context);
  return holds(filter, member, createdAt, context);
}

function holds(condition: Condition, member: FoldedMember, createdAt: Date, context: MatchContext): boolean {
  const { field, op, value } = condition;
  const kind = kindOf(field, context.types);
  if (kind === "audience") return context.inAudience(value as string) === (op === "in");
  const values = kind === "createdAt" ? [createdAt.toISOString()] : valuesOf(member, field);
  if (op === "exists") return values.length > 0;
  if (op === "notExists") return values.length === 0;
  if (kind === "string") return stringHolds(op, value, values);
  // A typed field has one value at most.
  const [text] = values;
  if (kind === "boolean") return text === value;
  const read = kind === "number" ? parseNumber : instantOf;
  // createdAt is at hand as an instant: read back from its text, it cost a write a cache lookup per condition and member.
  const x = kind === "createdAt" ? createdAt.getTime() : text === undefined ? undefined : read(text);
  const target = (v: string) => read(v) as number;
  switch (op) {
    case "ne":
      return x === undefined || x !== target(value as string);
    case "notIn":
      return x === undefined || !(value as string[]).some((v) => target(v) === x);
  }
  if (x === undefined) return false;
  switch (op) {
    case "eq":
      return x === target(value as string);
    case "in":
      return (value as string[]).some((v) => target(v) === x);
    case "gt":
    case "after":
      return x > target(value as string);
    case "gte":
      return x >= target(value as string);
    case "lt":
    case "before":
      return x < target(value as string);
    case "lte":
      return x <= target(value as string);
    case "between": {
      const [low, high] = value as [string, string];
      return x >= target(low) && x <= target(high);
    }
  }
  const within = x >= windowStart(value as string, context.now) && x <= context.now;
  return op === "withinLast" ? within : !within;
}

/** Where a withinLast window of this duration starts, seen at `now`. */
export const windowStart = (duration: string, now: number): number =>
  windowStarts.memo(`${duration} ${now}`, { context: { duration, now } });

// Reading a date or a window's start costs microseconds, and a batch reads the same ones again and
// again: a member's value once per audience evaluated, a window once per member. Kept by text.
const windowStarts = new LRUCache<string, number, { duration: string; now: number }>({
  max: 1_000,
  memoMethod: (_, __, { context: { duration, now } }) =>
    durationBefore(now, parseDuration(duration) as NonNullable<ReturnType<typeof parseDuration>>),
});
const instants = new LRUCache<string, number>({
  max: 100_000,
  maxSize: 4_000_000,
  sizeCalculation: (_, text) => text.length + 1,
  // Not a date: NaN (a cache keeps no undefined), read back as undefined.
  memoMethod: (text) => parseDate(text) ?? Number.NaN,
});
const instantOf = (text: string): number | undefined => {
  const at = instants.memo(text);
  return Number.isNaN(at) ? undefined : at;
};

// A write evaluates each rule for every member it changes: an `in` list folded for each of them
// cost as much as the list's text (a rule's lists may hold 1 MiB), so it is folded once into a set.
const foldedLists = new WeakMap<readonly string[], ReadonlySet<string>>();
function foldedSet(list: readonly string[]): ReadonlySet<string> {
  let set = foldedLists.get(list);
  if (set === undefined) {
    set = new Set(list.map(fold));
    foldedLists.set(list, set);
  }
  return set;
}

function stringHolds(op: Condition["op"], value: Condition["value"], values: string[]): boolean {
  if (op === "in" || op === "notIn") {
    const list = foldedSet(value as string[]);
    const found = values.some((v) => list.has(v));
    return op === "in" ? found : !found;
  }
  const target = fold(value as string);
  const test = {
    eq: (v: string) => v === target,
    ne: (v: string) => v === target,
    contains: (v: string) => v.includes(target),
    startsWith: (v: string) => v.startsWith(target),
    endsWith: (v: string) => v.endsWith(target),
  }[op as "eq" | "ne" | "contains" | "startsWith" | "endsWith"];
  const found = values.some(test);
  return op === "ne" ? !found : found;
}

function valuesOf(member: FoldedMember, field: string): string[] {
  if (field === "id") return [member.id];
  if (field === "email") return member.email === null ? [] : [member.email];
  if (field === "anyEmail") return member.emails;
  // Own keys only: `fields.constructor` or `fields.toString` must not find Object's members.
  const key = field.slice("fields.".length);
  return Object.hasOwn(member.fields, key) ? [member.fields[key] as string] : [];
}

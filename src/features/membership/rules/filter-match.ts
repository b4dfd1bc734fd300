import { LRUCache } from "lru-cache";
import type { FilterOperatorOf } from "../../../../generated/filter-operators.ts";
import { assertNever } from "../../../domain/assert-never.ts";
import { durationBefore, parseDuration } from "../../../domain/durations.ts";
import { type FieldTypes, parseDate, parseNumber } from "../../../domain/field-types.ts";
import { type ActivityCondition, type ActivityTally, countHolds } from "./activity-condition.ts";
import { type Condition, type Filter, type FoldedMember, fold, isActivity, kindOf } from "./filter.ts";

/** What evaluating a rule needs besides the member: field types, the time, other audiences. */
export interface MatchContext {
  types: FieldTypes;
  /** The instant relative-time conditions are evaluated at (milliseconds since the epoch). */
  now: number;
  /** Whether the member is a member of that audience (audience conditions). */
  inAudience(audienceId: string): boolean;
  /**
   * What an activity condition counts of the member's activities (read by the database:
   * rule-repo's activityTallies). Needed only for a filter with activity conditions.
   */
  activity?(condition: ActivityCondition): ActivityTally;
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
  if (isActivity(filter)) return countHolds(filter, tallyOf(filter, context).count);
  return holds(filter, member, createdAt, context);
}

/** The member's tally for an activity condition; a caller that evaluates one must provide it. */
export function tallyOf(condition: ActivityCondition, context: MatchContext): ActivityTally {
  if (context.activity === undefined)
    throw new Error("an activity condition evaluated without the member's activities");
  return context.activity(condition);
}

function holds(condition: Condition, member: FoldedMember, createdAt: Date, context: MatchContext): boolean {
  const { field, value } = condition;
  const kind = kindOf(field, context.types);
  switch (kind) {
    case "audience":
      return context.inAudience(value as string) === ((condition.op as FilterOperatorOf<"audience">) === "in");
    case "string":
      return stringHolds(condition.op as FilterOperatorOf<"string">, value, valuesOf(member, field));
    case "boolean": {
      const values = valuesOf(member, field);
      const op = condition.op as FilterOperatorOf<"boolean">;
      switch (op) {
        case "exists":
          return values.length > 0;
        case "notExists":
          return values.length === 0;
        case "eq":
          return values[0] === value;
        default:
          return assertNever(op, "boolean operator");
      }
    }
    case "number":
    case "date":
    case "createdAt": {
      // A typed field has one value at most. createdAt is at hand as an instant: read back from
      // its text, it cost a write a cache lookup per condition and member.
      if (kind === "createdAt") {
        return typedHolds(kind, condition.op as TypedOp, value, createdAt.getTime(), true, context.now);
      }
      const [text] = valuesOf(member, field);
      const x = text === undefined ? undefined : (kind === "number" ? parseNumber : instantOf)(text);
      return typedHolds(kind, condition.op as TypedOp, value, x, text !== undefined, context.now);
    }
    default:
      return assertNever(kind, "field kind");
  }
}

type TypedOp = FilterOperatorOf<"number" | "date" | "createdAt">;

/**
 * A number or date condition on the member's value `x` (undefined when it has none or it does not
 * read as one); `present`: whether the member has text for the field at all.
 */
function typedHolds(
  kind: "number" | "date" | "createdAt",
  op: TypedOp,
  value: Condition["value"],
  x: number | undefined,
  present: boolean,
  now: number,
): boolean {
  const read = kind === "number" ? parseNumber : instantOf;
  const target = (v: string) => read(v) as number;
  switch (op) {
    // Presence is of the stored text, as in SQL (a typed field's stored values all parse).
    case "exists":
      return present;
    case "notExists":
      return !present;
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
    case "withinLast":
    case "notWithinLast": {
      const within = x >= windowStart(value as string, now) && x <= now;
      return op === "withinLast" ? within : !within;
    }
    default:
      return assertNever(op, "operator");
  }
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

function stringHolds(op: FilterOperatorOf<"string">, value: Condition["value"], values: string[]): boolean {
  switch (op) {
    case "exists":
      return values.length > 0;
    case "notExists":
      return values.length === 0;
    case "in":
    case "notIn": {
      const list = foldedSet(value as string[]);
      const found = values.some((v) => list.has(v));
      return op === "in" ? found : !found;
    }
  }
  const target = fold(value as string);
  switch (op) {
    case "eq":
      return values.some((v) => v === target);
    case "ne":
      return !values.some((v) => v === target);
    case "contains":
      return values.some((v) => v.includes(target));
    case "startsWith":
      return values.some((v) => v.startsWith(target));
    case "endsWith":
      return values.some((v) => v.endsWith(target));
    default:
      return assertNever(op, "string operator");
  }
}

function valuesOf(member: FoldedMember, field: string): string[] {
  if (field === "id") return [member.id];
  if (field === "email") return member.email === null ? [] : [member.email];
  if (field === "anyEmail") return member.emails;
  // Own keys only: `fields.constructor` or `fields.toString` must not find Object's members.
  const key = field.slice("fields.".length);
  return Object.hasOwn(member.fields, key) ? [member.fields[key] as string] : [];
}

// The filter language evaluated the naive way, written from the contract and docs/rules.md and
// sharing no code with src/features/membership/rules/filter.ts: the oracle that the in-memory fakes, the property
// test and the filter's unit tests compare the service against. It favours being obviously right
// over being fast: every case spelled out, no folding done ahead, nothing cached.
//
//   - a condition on a field looks at the member's values of that field: `id` (one), `email` (the
//     primary address, or none), `anyEmail` (the primary and every alternative), `fields.<key>`
//     (the value, or none when the member has no such field or it is empty);
//   - strings compare case-insensitively (lower case on both sides);
//   - eq / contains / startsWith / endsWith / in: some value qualifies; ne / notIn: none does
//     (so a member without the field matches ne and notIn); exists / notExists: has any value;
//   - createdAt before / after: strictly earlier / strictly later than the timestamp;
//   - typed fields (a declared type; `context.types`): numbers compare by value, dates as instants
//     (a date alone is its UTC midnight); eq / gt / gte / lt / lte / before / after / between /
//     in need a value; ne and notIn are the negations of eq and in; a boolean is eq to
//     "true" or "false"; withinLast D: from D before `context.now` up to now, inclusive;
//     notWithinLast: has a value outside that window; createdAt takes the date operators;
//   - audience in / notIn: whether `context.inAudience(id)` says the member is in it;
//   - activity: the member's activities (`context.activities`) of that type, kept (not older
//     than `retentionDays` before now), in the window (withinLast D: at or after D before now;
//     notWithinLast D: before that; between: inclusive) and matching `where`, counted and compared
//     with `count` (at least 1 when absent); `where` compares a number property with numbers, a
//     string property case-insensitively, a boolean with "true"/"false", `type` as a string;
//   - all: every part matches; any: at least one; not: the part does not; no filter: nobody.

type Condition = { field: string; op: string; value?: string | string[] };
type Where = { all: Where[] } | { any: Where[] } | { not: Where } | Condition;
type ActivityCondition = {
  activity: string;
  where?: Where;
  count?: { op: string; value: number };
  withinLast?: string;
  notWithinLast?: string;
  between?: string[];
};
/** The shape of src/features/membership/rules/filter.ts's Filter, restated so nothing is imported from it. */
export type ReferenceFilter =
  | { all: ReferenceFilter[] }
  | { any: ReferenceFilter[] }
  | { not: ReferenceFilter }
  | Condition
  | ActivityCondition;

/** An activity as a member did it. */
export interface PlainActivity {
  type: string;
  occurredAt: number;
  properties: Record<string, string | number | boolean>;
}

/** A member as the API shows it (createdAt as a Date or as its ISO string). */
export interface PlainMember {
  id: string;
  email: string | null;
  alternativeEmails: string[];
  fields: Record<string, string>;
  createdAt: Date | string;
}

/** Declared field types (key → number | date | boolean), the time, and other audiences' members. */
export interface ReferenceContext {
  types?: Record<string, string>;
  now?: number;
  inAudience?: (audienceId: string, member: PlainMember) => boolean;
  /** The member's stored activities (activity conditions). */
  activities?: (member: PlainMember) => PlainActivity[];
  /** How many days activities are kept; none: every one counts. */
  retentionDays?: number;
}

export function referenceMatches(
  filter: ReferenceFilter | null,
  member: PlainMember,
  context: ReferenceContext = {},
): boolean {
  if (filter === null) return false;
  if ("all" in filter) {
    for (const part of filter.all) if (!referenceMatches(part, member, context)) return false;
    return true;
  }
  if ("any" in filter) {
    for (const part of filter.any) if (referenceMatches(part, member, context)) return true;
    return false;
  }
  if ("not" in filter) return !referenceMatches(filter.not, member, context);
  if ("activity" in filter) {
    const { count } = referenceTally(filter, member, context);
    const { op, value } = filter.count ?? { op: "gte", value: 1 };
    const compared = {
      eq: count === value,
      ne: count !== value,
      gt: count > value,
      gte: count >= value,
      lt: count < value,
      lte: count <= value,
    }[op];
    if (compared === undefined) throw new Error(`reference filter: ${op} is not a count operator`);
    return compared;
  }
  return conditionHolds(filter, member, context);
}

/** How many of the member's activities an activity condition counts, and when the latest occurred. */
export function referenceTally(
  condition: ActivityCondition,
  member: PlainMember,
  context: ReferenceContext,
): { count: number; lastAt: number | null } {
  if (!context.activities) throw new Error("reference filter: an activity condition needs activities");
  const now = context.now ?? Date.now();
  let count = 0;
  let lastAt: number | null = null;
  for (const activity of context.activities(member)) {
    const at = activity.occurredAt;
    if (activity.type !== condition.activity) continue;
    if (context.retentionDays !== undefined && at < now - context.retentionDays * 86_400_000) continue;
    if (condition.withinLast !== undefined && at < monthsAndDaysBefore(now, condition.withinLast)) continue;
    if (condition.notWithinLast !== undefined && at >= monthsAndDaysBefore(now, condition.notWithinLast)) continue;
    if (condition.between !== undefined) {
      if (at < Date.parse(condition.between[0] as string) || at > Date.parse(condition.between[1] as string)) continue;
    }
    if (condition.where !== undefined && !whereHolds(condition.where, activity)) continue;
    count += 1;
    if (lastAt === null || at > lastAt) lastAt = at;
  }
  return { count, lastAt };
}

function whereHolds(where: Where, activity: PlainActivity): boolean {
  if ("all" in where) return where.all.every((w) => whereHolds(w, activity));
  if ("any" in where) return where.any.some((w) => whereHolds(w, activity));
  if ("not" in where) return !whereHolds(where.not, activity);
  const { field, op, value } = where;
  const key = field.substring("properties.".length);
  const found: string | number | boolean | undefined =
    field === "type" ? activity.type : Object.hasOwn(activity.properties, key) ? activity.properties[key] : undefined;
  const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
  const equalsOne = (v: string) => {
    if (typeof found === "number") return v.trim() !== "" && Number(v) === found;
    if (typeof found === "string") return lower(found) === lower(v);
    if (typeof found === "boolean") return String(found) === lower(v);
    return false;
  };
  const text = typeof found === "string" ? lower(found) : undefined;
  const wanted = lower(values[0] ?? "");
  const number = typeof found === "number" && field !== "type" ? found : undefined;
  switch (op) {
    case "eq":
    case "in":
      return values.some(equalsOne);
    case "ne":
    case "notIn":
      return !values.some(equalsOne);
    case "contains":
      return text !== undefined && text.indexOf(wanted) !== -1;
    case "startsWith":
      return text !== undefined && text.substring(0, wanted.length) === wanted;
    case "endsWith":
      return (
        text !== undefined && text.length >= wanted.length && text.substring(text.length - wanted.length) === wanted
      );
    case "gt":
      return number !== undefined && number > Number(values[0]);
    case "gte":
      return number !== undefined && number >= Number(values[0]);
    case "lt":
      return number !== undefined && number < Number(values[0]);
    case "lte":
      return number !== undefined && number <= Number(values[0]);
    case "between":
      return number !== undefined && number >= Number(values[0]) && number <= Number(values[1]);
    case "exists":
      return found !== undefined;
    case "notExists":
      return found === undefined;
  }
  throw new Error(`reference filter: unknown where operator ${op}`);
}

function conditionHolds(condition: Condition, member: PlainMember, context: ReferenceContext): boolean {
  const { field, op, value } = condition;
  if (field === "audience") {
    if (!context.inAudience) throw new Error("reference filter: an audience condition needs inAudience");
    const inside = context.inAudience(value as string, member);
    if (op === "in") return inside;
    if (op === "notIn") return !inside;
    throw new Error(`reference filter: ${op} is not an operator of audience`);
  }
  if (field === "createdAt") return typedHolds("date", [new Date(member.createdAt).toISOString()], condition, context);
  // Own keys only, as for the member's fields: `fields.toString` must not find Object's toString.
  const key = field.substring("fields.".length);
  const type =
    field.startsWith("fields.") && context.types && Object.hasOwn(context.types, key) ? context.types[key] : undefined;
  if (type !== undefined && type !== "string") return typedHolds(type, valuesOf(member, field), condition, context);
  const values = valuesOf(member, field).map(lower);
  const wanted = typeof value === "string" ? lower(value) : "";
  const list = Array.isArray(value) ? value.map(lower) : [];
  const some = (test: (v: string) => boolean) => {
    for (const v of values) if (test(v)) return true;
    return false;
  };
  switch (op) {
    case "eq":
      return some((v) => v === wanted);
    case "ne":
      return !some((v) => v === wanted);
    case "contains":
      return some((v) => v.indexOf(wanted) !== -1);
    case "startsWith":
      return some((v) => v.substring(0, wanted.length) === wanted);
    case "endsWith":
      return some((v) => v.length >= wanted.length && v.substring(v.length - wanted.length) === wanted);
    case "in":
      return some((v) => list.indexOf(v) !== -1);
    case "notIn":
      return !some((v) => list.indexOf(v) !== -1);
    case "exists":
      return values.length > 0;
    case "notExists":
      return values.length === 0;
  }
  throw new Error(`reference filter: unknown operator ${op}`);
}

function typedHolds(type: string, values: string[], { op, value }: Condition, context: ReferenceContext): boolean {
  if (op === "exists") return values.length > 0;
  if (op === "notExists") return values.length === 0;
  if (op === "ne") return !typedHolds(type, values, { field: "", op: "eq", value }, context);
  if (op === "notIn") return !typedHolds(type, values, { field: "", op: "in", value }, context);
  if (values.length === 0) return false;
  const text = values[0] as string;
  if (type === "boolean") {
    if (op !== "eq") throw new Error(`reference filter: ${op} is not an operator of booleans`);
    return lower(text) === lower(value as string);
  }
  const read = type === "number" ? Number : instantOf;
  const x = read(text);
  const v = (t: unknown) => read(t as string);
  switch (op) {
    case "eq":
      return x === v(value);
    case "in":
      return (value as string[]).some((item) => v(item) === x);
    case "gt":
    case "after":
      return x > v(value);
    case "gte":
      return x >= v(value);
    case "lt":
    case "before":
      return x < v(value);
    case "lte":
      return x <= v(value);
    case "between":
      return x >= v((value as string[])[0]) && x <= v((value as string[])[1]);
    case "withinLast":
    case "notWithinLast": {
      if (context.now === undefined) throw new Error("reference filter: withinLast needs now");
      const inside = x >= monthsAndDaysBefore(context.now, value as string) && x <= context.now;
      return op === "withinLast" ? inside : !inside;
    }
  }
  throw new Error(`reference filter: ${op} is not an operator of ${type}`);
}

/** A date value as an instant: a date alone is its UTC midnight. */
function instantOf(text: string): number {
  const upper = text.toUpperCase();
  return Date.parse(upper.length === 10 ? `${upper}T00:00:00Z` : upper);
}

/**
 * The instant an ISO 8601 duration before `now`: years and months on the UTC calendar (a day
 * that the month lacks becomes its last), then weeks, days, hours, minutes and seconds.
 */
function monthsAndDaysBefore(now: number, duration: string): number {
  const [datePart, timePart = ""] = duration.substring(1).split("T") as [string, string?];
  const read = (part: string, unit: string) => Number(new RegExp(`(\\d+)${unit}`).exec(part)?.[1] ?? 0);
  const totalMonths = read(datePart, "Y") * 12 + read(datePart, "M");
  const start = new Date(now);
  let year = start.getUTCFullYear();
  let month = start.getUTCMonth() - totalMonths;
  while (month < 0) {
    month += 12;
    year -= 1;
  }
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const day = Math.min(start.getUTCDate(), lastDay);
  const moved = Date.UTC(
    year,
    month,
    day,
    start.getUTCHours(),
    start.getUTCMinutes(),
    start.getUTCSeconds(),
    start.getUTCMilliseconds(),
  );
  const seconds =
    read(datePart, "W") * 7 * 86400 +
    read(datePart, "D") * 86400 +
    read(timePart, "H") * 3600 +
    read(timePart, "M") * 60 +
    read(timePart, "S");
  return moved - seconds * 1000;
}

function valuesOf(member: PlainMember, field: string): string[] {
  if (field === "id") return [member.id];
  if (field === "email") return member.email === null ? [] : [member.email];
  if (field === "anyEmail")
    return member.email === null ? member.alternativeEmails : [member.email, ...member.alternativeEmails];
  if (field.startsWith("fields.")) {
    const key = field.substring("fields.".length);
    const found = Object.hasOwn(member.fields, key) ? member.fields[key] : undefined;
    return found === undefined || found === "" ? [] : [found];
  }
  throw new Error(`reference filter: unknown field ${field}`);
}

const lower = (text: string) => text.toLowerCase();

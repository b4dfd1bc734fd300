import type { components } from "../../../../generated/api.d.ts";
import { assertNever } from "../../../domain/assert-never.ts";
import { durationBefore, parseDuration } from "../../../domain/durations.ts";
import { parseDate, parseNumber } from "../../../domain/field-types.ts";

/** A condition on what a member did (DESIGN §10): how many of its activities match, in a window. */
export type ActivityCondition = components["schemas"]["FilterActivity"];
/** Which of a member's activities an activity condition counts: a filter over `type` and `properties.<key>`. */
export type ActivityWhere = components["schemas"]["ActivityWhere"];
export type WhereCondition = components["schemas"]["ActivityWhereCondition"];
export type WhereOp = WhereCondition["op"];
export type CountOp = components["schemas"]["ActivityCount"]["op"];

/** What one activity condition read of a member: how many activities it counted, and the latest. */
export interface ActivityTally {
  count: number;
  /** When the latest counted activity occurred (ms since the epoch); null when it counted none. */
  lastAt: number | null;
}

export const DAY_MS = 86_400_000;
const ACTIVITY_TYPE = /^[A-Za-z0-9_.:-]{1,100}$/;
const WHERE_FIELD = /^(type|properties\.[A-Za-z][A-Za-z0-9_]{0,63})$/;
const KEYS = new Set(["activity", "where", "count", "withinLast", "notWithinLast", "between"]);
const MAX_COUNT = 1_000_000;
const DEFAULT_COUNT = { op: "gte", value: 1 } as const;

/**
 * What each operator of `where` needs of a property: `value` compares by the property's JSON type
 * (numbers by value, strings case-folded, booleans as true/false); `text` applies to strings only;
 * `number` to numbers only, against values that are numbers; `presence` takes no value.
 */
export const WHERE_OPS: Record<WhereOp, "value" | "text" | "number" | "presence"> = {
  eq: "value",
  ne: "value",
  in: "value",
  notIn: "value",
  contains: "text",
  startsWith: "text",
  endsWith: "text",
  gt: "number",
  gte: "number",
  lt: "number",
  lte: "number",
  between: "number",
  exists: "presence",
  notExists: "presence",
};

/** What a filter's parse needs to check an activity condition's window. */
export interface ActivityLimits {
  /** ACTIVITY_RETENTION_DAYS: a window may not reach past what is kept. Absent: not checked. */
  retentionDays?: number | undefined;
  now: number;
}

type Fail = (at: string, message: string) => never;

/**
 * Checks an activity condition and returns it normalized (durations upper-cased, instants in
 * canonical form, the default count written out), or fails at its first bad part. `countWhere`
 * is told of every condition of its `where`, which counts toward the filter's conditions.
 */
export function parseActivityCondition(
  record: Record<string, unknown>,
  at: string,
  limits: ActivityLimits,
  fail: Fail,
  countWhere: (at: string) => void,
): ActivityCondition {
  const unknownKey = Object.keys(record).find((key) => !KEYS.has(key));
  if (unknownKey !== undefined) {
    fail(
      `${at}/${unknownKey}`,
      "is not part of an activity condition (activity, where, count, withinLast, notWithinLast, between)",
    );
  }
  const { activity, where, count } = record;
  if (typeof activity !== "string" || !ACTIVITY_TYPE.test(activity)) {
    fail(`${at}/activity`, "must be an activity type: 1 to 100 letters, digits, _ . : or -");
  }
  const condition: ActivityCondition = { activity: activity as string, count: parseCount(count, `${at}/count`, fail) };
  if (where !== undefined) condition.where = parseWhere(where, `${at}/where`, 1, fail, countWhere);
  const windows = (["withinLast", "notWithinLast", "between"] as const).filter((key) => record[key] !== undefined);
  if (windows.length > 1) fail(`${at}/${windows[1]}`, "must be absent: a condition has at most one window");
  const window = windows[0];
  if (window === undefined) return condition;
  const valueAt = `${at}/${window}`;
  const retentionFrom = limits.retentionDays === undefined ? undefined : limits.now - limits.retentionDays * DAY_MS;
  const kept = `the ${limits.retentionDays} days activities are kept (ACTIVITY_RETENTION_DAYS)`;
  if (window === "between") {
    const value = record.between;
    const instants = Array.isArray(value) && value.length === 2 ? value.map((v) => instantOf(v)) : [];
    const [from, to] = instants;
    if (from === undefined || to === undefined)
      fail(valueAt, "must be [from, to]: two dates or timestamps with a zone");
    if ((from as number) > (to as number)) fail(valueAt, "must be [from, to] with from at most to");
    if (retentionFrom !== undefined && (from as number) < retentionFrom) fail(`${valueAt}/0`, `must be within ${kept}`);
    return { ...condition, between: [iso(from as number), iso(to as number)] };
  }
  const text = typeof record[window] === "string" ? (record[window] as string).toUpperCase() : "";
  const duration = parseDuration(text);
  if (duration === undefined) fail(valueAt, "must be an ISO 8601 duration (P30D, PT12H, P1Y2M) of at most 10 years");
  const start = durationBefore(limits.now, duration as NonNullable<typeof duration>);
  if (retentionFrom !== undefined) {
    // notWithinLast counts what is older than the duration and still kept: it must leave some.
    const past = window === "withinLast" ? start < retentionFrom : start <= retentionFrom;
    if (past) fail(valueAt, `must be ${window === "withinLast" ? "at most" : "shorter than"} ${kept}`);
  }
  return { ...condition, [window]: text };
}

function parseCount(input: unknown, at: string, fail: Fail): NonNullable<ActivityCondition["count"]> {
  if (input === undefined) return { ...DEFAULT_COUNT };
  if (typeof input !== "object" || input === null || Array.isArray(input)) return fail(at, "must be {op, value}");
  const { op, value, ...rest } = input as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) fail(`${at}/${extra}`, "is not part of a count (op, value)");
  if (typeof op !== "string" || !(op in COUNT_OPS)) fail(`${at}/op`, "must be one of eq, ne, gt, gte, lt, lte");
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > MAX_COUNT) {
    fail(`${at}/value`, "must be a whole number from 0 to 1,000,000");
  }
  return { op: op as CountOp, value: value as number };
}

const COUNT_OPS: Record<CountOp, (n: number, value: number) => boolean> = {
  eq: (n, v) => n === v,
  ne: (n, v) => n !== v,
  gt: (n, v) => n > v,
  gte: (n, v) => n >= v,
  lt: (n, v) => n < v,
  lte: (n, v) => n <= v,
};

/** Whether `n` matching activities satisfy the condition's count. */
export function countHolds(condition: ActivityCondition, n: number): boolean {
  const { op, value } = condition.count ?? DEFAULT_COUNT;
  return COUNT_OPS[op](n, value);
}

function parseWhere(
  node: unknown,
  at: string,
  depth: number,
  fail: Fail,
  countWhere: (at: string) => void,
): ActivityWhere {
  if (depth > 10) fail(at, "nests deeper than 10 levels");
  if (typeof node !== "object" || node === null || Array.isArray(node)) return fail(at, "must be an object");
  const record = node as Record<string, unknown>;
  const keys = Object.keys(record);
  for (const combinator of ["all", "any"] as const) {
    if (!(combinator in record)) continue;
    if (keys.length !== 1) fail(at, `must hold only "${combinator}"`);
    const items = record[combinator];
    if (!Array.isArray(items) || items.length === 0 || items.length > 100) {
      fail(`${at}/${combinator}`, "must be a list of 1 to 100 filters");
    }
    const children = (items as unknown[]).map((item, i) =>
      parseWhere(item, `${at}/${combinator}/${i}`, depth + 1, fail, countWhere),
    );
    return combinator === "all" ? { all: children } : { any: children };
  }
  if ("not" in record) {
    if (keys.length !== 1) fail(at, 'must hold only "not"');
    return { not: parseWhere(record.not, `${at}/not`, depth + 1, fail, countWhere) };
  }
  countWhere(at);
  return parseWhereCondition(record, at, fail);
}

function parseWhereCondition(record: Record<string, unknown>, at: string, fail: Fail): WhereCondition {
  const unknownKey = Object.keys(record).find((key) => !["field", "op", "value"].includes(key));
  if (unknownKey !== undefined) fail(`${at}/${unknownKey}`, "is not part of a condition (field, op, value)");
  const { field, op, value } = record;
  if (typeof field !== "string" || !WHERE_FIELD.test(field)) fail(`${at}/field`, "must be type or properties.<key>");
  if (typeof op !== "string" || !Object.hasOwn(WHERE_OPS, op)) {
    fail(`${at}/op`, `must be one of ${Object.keys(WHERE_OPS).join(", ")}`);
  }
  const condition = { field, op } as WhereCondition;
  const needs = WHERE_OPS[condition.op];
  const valueAt = `${at}/value`;
  const text = (v: unknown, where: string): string => {
    if (typeof v !== "string" || v.length > 1024 || v.includes("\u0000")) {
      return fail(where, "must be a string of at most 1,024 characters, without NUL");
    }
    if (needs === "number" && parseNumber(v) === undefined) fail(where, `must be a number for ${condition.op}`);
    return v;
  };
  switch (needs) {
    case "presence":
      if (value !== undefined) fail(valueAt, `must be absent for ${condition.op}`);
      return condition;
    case "value":
    case "text":
    case "number":
      if (condition.op === "in" || condition.op === "notIn" || condition.op === "between") {
        const size = condition.op === "between" ? [2, 2] : [1, 100];
        if (!Array.isArray(value) || value.length < (size[0] as number) || value.length > (size[1] as number)) {
          fail(valueAt, condition.op === "between" ? "must be [low, high]" : "must be a list of 1 to 100 strings");
        }
        const list = (value as unknown[]).map((v, i) => text(v, `${valueAt}/${i}`));
        if (
          condition.op === "between" &&
          (parseNumber(list[0] as string) as number) > (parseNumber(list[1] as string) as number)
        ) {
          fail(valueAt, "must be [low, high] with low at most high");
        }
        return { ...condition, value: list };
      }
      return { ...condition, value: text(value, valueAt) };
    default:
      return assertNever(needs, "where operator");
  }
}

/** The instants an activity condition counts between, seen at `now`: [from, to], `to` exclusive when `toOpen`. */
export function activityWindow(
  condition: ActivityCondition,
  now: number,
  retentionDays: number | undefined,
): { from: number | null; to: number | null; toOpen: boolean } {
  const kept = retentionDays === undefined ? null : now - retentionDays * DAY_MS;
  const latest = (a: number | null, b: number) => (a === null ? b : Math.max(a, b));
  if (condition.withinLast !== undefined) {
    return { from: latest(kept, startOf(condition.withinLast, now)), to: null, toOpen: false };
  }
  if (condition.notWithinLast !== undefined) {
    return { from: kept, to: startOf(condition.notWithinLast, now), toOpen: true };
  }
  if (condition.between !== undefined) {
    const [from, to] = condition.between as [string, string];
    return { from: latest(kept, Date.parse(from)), to: Date.parse(to), toOpen: false };
  }
  return { from: kept, to: null, toOpen: false };
}

/**
 * The edges of a condition's window that slide with the clock, as how long ago they are: an
 * activity crosses one as time passes, and only then can the count change without an ingest. The
 * retention's edge is one (what is no longer kept no longer counts); a relative window's start is
 * the other. `between` slides only at the retention.
 */
export function slidingEdges(condition: ActivityCondition): string[] {
  const relative = condition.withinLast ?? condition.notWithinLast;
  return relative === undefined ? [] : [relative];
}

const startOf = (duration: string, now: number) =>
  durationBefore(now, parseDuration(duration) as NonNullable<ReturnType<typeof parseDuration>>);

const iso = (at: number) => new Date(at).toISOString();

function instantOf(value: unknown): number | undefined {
  if (typeof value !== "string" || value.length > 64) return undefined;
  const at = parseDate(value);
  return at !== undefined && at >= Date.parse("0001-01-01T00:00:00Z") && at <= Date.parse("9999-12-31T23:59:59.999Z")
    ? at
    : undefined;
}

/** A condition on `type`: every activity the condition counts has its type, so it is decided here (folded as filter.ts folds). */
export function typeHolds(condition: WhereCondition, type: string): boolean {
  const x = type.toLowerCase();
  const values = (Array.isArray(condition.value) ? condition.value : [condition.value ?? ""]).map((v) =>
    v.toLowerCase(),
  );
  const [v = ""] = values;
  const op = condition.op;
  switch (op) {
    case "eq":
      return x === v;
    case "ne":
      return x !== v;
    case "in":
      return values.includes(x);
    case "notIn":
      return !values.includes(x);
    case "contains":
      return x.includes(v);
    case "startsWith":
      return x.startsWith(v);
    case "endsWith":
      return x.endsWith(v);
    case "exists":
      return true;
    case "notExists":
    case "gt":
    case "gte":
    case "lt":
    case "lte":
    case "between":
      // A type is text: comparisons of numbers do not match it.
      return false;
    default:
      return assertNever(op, "where operator");
  }
}

import type { components } from "../../../../generated/api.d.ts";
import { FILTER_OPERATORS, type FilterFieldKind } from "../../../../generated/filter-operators.ts";
import { parseDuration } from "../../../domain/durations.ts";
import { BadRequestError } from "../../../domain/errors.ts";
import {
  type FieldType,
  type FieldTypes,
  parseBoolean,
  parseDate,
  parseNumber,
  TYPE_FORMS,
  typeOf,
} from "../../../domain/field-types.ts";
import { type ActivityCondition, type ActivityWhere, parseActivityCondition } from "./activity-condition.ts";

export type Filter = components["schemas"]["Filter"];
export type Condition = components["schemas"]["FilterCondition"];
export type Op = Condition["op"];
/** A leaf of a filter: a condition on the member's data or audiences, or on what it did. */
export type Leaf = Condition | ActivityCondition;
export const isActivity = (leaf: Leaf): leaf is ActivityCondition => "activity" in leaf;

export const MAX_FILTER_DEPTH = 10;
export const MAX_FILTER_CONDITIONS = 100;

/** The operators of each kind of field, as the contract declares them; `audience` is a condition on another audience. */
const OPS: Record<FieldKind, readonly Op[]> = FILTER_OPERATORS;

/** What a condition's field is: a custom field's declared type, createdAt, or another audience. */
export type FieldKind = FilterFieldKind;
// The contract's kinds are the field types and the two fields of their own (a type check only).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Holds<T extends true> = T;
export type KindsAgree = Holds<Same<FieldKind, FieldType | "createdAt" | "audience">>;
const PRESENCE_OPS = new Set<Op>(["exists", "notExists"]);
// Timestamps PostgreSQL can hold; the year 0000 and beyond 9999 are refused.
const FIRST_TIME = Date.parse("0001-01-01T00:00:00.000Z");
const LAST_TIME = Date.parse("9999-12-31T23:59:59.999Z");
const FIELD_PATTERN = /^(id|email|anyEmail|createdAt|audience|fields\.[A-Za-z][A-Za-z0-9_]{0,63})$/;
const TEXT_LIMIT = "of at most 1,024 characters, without NUL";

/** What a filter is checked against: the workspace's declared field types, and what activities are kept. */
export interface FilterSchema {
  types: FieldTypes;
  /** ACTIVITY_RETENTION_DAYS: activity conditions' windows may not reach past it (unchecked when absent). */
  activityRetentionDays?: number | undefined;
  /** The time windows are checked at (Date.now() when absent). */
  now?: number;
}

/** The kind of field a condition reads, which decides its operators and how values compare. */
export function kindOf(field: string, types: FieldTypes): FieldKind {
  if (field === "createdAt" || field === "audience") return field;
  return field.startsWith("fields.") ? typeOf(types, field.slice("fields.".length)) : "string";
}

/**
 * Checks a filter a client sent and returns it normalized (timestamps in canonical form), or
 * throws invalid_filter pointing at the first bad node. The contract's schema describes the same
 * language; this is what enforces it, with limits the schema cannot express. Whether the
 * audiences that audience conditions name exist is for the caller (it needs the database).
 */
export function parseFilter(input: unknown, schema: FilterSchema, pointer = "/body/filter"): Filter {
  let conditions = 0;
  const fail = (at: string, message: string, detail = `${at} ${message}`): never => {
    throw new BadRequestError("invalid_filter", detail, [{ pointer: at, message }]);
  };

  const visit = (node: unknown, at: string, depth: number): Filter => {
    if (depth > MAX_FILTER_DEPTH) fail(at, `nests deeper than ${MAX_FILTER_DEPTH} levels`);
    if (typeof node !== "object" || node === null || Array.isArray(node)) return fail(at, "must be an object");
    const keys = Object.keys(node);
    const record = node as Record<string, unknown>;
    for (const combinator of ["all", "any"] as const) {
      if (!(combinator in record)) continue;
      if (keys.length !== 1) fail(at, `must hold only "${combinator}"`);
      const items = record[combinator];
      if (!Array.isArray(items) || items.length === 0 || items.length > MAX_FILTER_CONDITIONS) {
        fail(`${at}/${combinator}`, `must be a list of 1 to ${MAX_FILTER_CONDITIONS} filters`);
      }
      const children = (items as unknown[]).map((item, i) => visit(item, `${at}/${combinator}/${i}`, depth + 1));
      return combinator === "all" ? { all: children } : { any: children };
    }
    if ("not" in record) {
      if (keys.length !== 1) fail(at, 'must hold only "not"');
      return { not: visit(record.not, `${at}/not`, depth + 1) };
    }
    const count = (where: string) => {
      if (++conditions > MAX_FILTER_CONDITIONS) fail(where, `exceeds ${MAX_FILTER_CONDITIONS} conditions in all`);
    };
    count(at);
    if ("activity" in record) {
      const limits = { retentionDays: schema.activityRetentionDays, now: schema.now ?? Date.now() };
      return parseActivityCondition(record, at, limits, fail, count);
    }
    // Once a condition's field is known, the detail names it: a person reads "fields.score", not only a pointer.
    const field = record.field;
    const named =
      typeof field === "string" && FIELD_PATTERN.test(field)
        ? (where: string, message: string): never =>
            message.includes(field)
              ? fail(where, message)
              : fail(where, message, `${where} ${message} (the condition on ${field})`)
        : fail;
    return parseCondition(record, at, schema.types, named);
  };
  return visit(input, pointer, 1);
}

function parseCondition(
  record: Record<string, unknown>,
  at: string,
  types: FieldTypes,
  fail: (at: string, message: string) => never,
): Condition {
  const unknownKey = Object.keys(record).find((key) => !["field", "op", "value"].includes(key));
  if (unknownKey !== undefined) fail(`${at}/${unknownKey}`, "is not part of a condition (field, op, value)");
  const { field, op, value } = record;
  if (typeof field !== "string" || !FIELD_PATTERN.test(field)) {
    fail(`${at}/field`, "must be id, email, anyEmail, createdAt, audience or fields.<key>");
  }
  const kind = kindOf(field as string, types);
  const allowed = OPS[kind];
  if (!allowed.includes(op as Op)) {
    const what = (field as string).startsWith("fields.") ? `${field} (a ${kind})` : String(field);
    fail(`${at}/op`, `must be one of ${allowed.join(", ")} for ${what}`);
  }
  const condition = { field, op } as Condition;
  const valueAt = `${at}/value`;
  if (PRESENCE_OPS.has(condition.op)) {
    if (value !== undefined) fail(valueAt, `must be absent for ${condition.op}`);
    return condition;
  }
  if (kind === "audience") {
    if (typeof value !== "string" || !/^[A-Za-z0-9_-]{1,128}$/.test(value)) fail(valueAt, "must be an audience's id");
    return { ...condition, value: value as string };
  }
  const one = (text: unknown, where: string): string => parseValue(kind, text, where, fail);
  if (condition.op === "withinLast" || condition.op === "notWithinLast") {
    const text = typeof value === "string" ? value.toUpperCase() : "";
    if (parseDuration(text) === undefined) {
      fail(valueAt, "must be an ISO 8601 duration (P30D, PT12H, P1Y2M) of at most 10 years");
    }
    return { ...condition, value: text };
  }
  if (condition.op === "between") {
    if (!Array.isArray(value) || value.length !== 2) fail(valueAt, "must be [low, high]");
    const [low, high] = (value as unknown[]).map((v, i) => one(v, `${valueAt}/${i}`)) as [string, string];
    if (orderOf(kind, low) > orderOf(kind, high)) fail(valueAt, "must be [low, high] with low at most high");
    return { ...condition, value: [low, high] };
  }
  if (condition.op === "in" || condition.op === "notIn") {
    const ok = Array.isArray(value) && value.length >= 1 && value.length <= 100;
    if (!ok || !(value as unknown[]).every((v) => typeof v === "string" && v.length <= 1024 && !v.includes("\u0000"))) {
      fail(valueAt, "must be a list of 1 to 100 strings of at most 1,024 characters");
    }
    return { ...condition, value: (value as unknown[]).map((v, i) => one(v, `${valueAt}/${i}`)) };
  }
  return { ...condition, value: one(value, valueAt) };
}

/** A value of a condition on a field of this kind, normalized; fails unless it is one. */
function parseValue(
  kind: FieldType | "createdAt",
  value: unknown,
  at: string,
  fail: (at: string, message: string) => never,
): string {
  if (typeof value !== "string" || value.length > 1024 || value.includes("\u0000")) {
    return fail(at, `must be a string ${TEXT_LIMIT}`);
  }
  if (kind === "number" && parseNumber(value) === undefined) fail(at, `must be ${TYPE_FORMS.number}`);
  if (kind === "boolean") {
    if (parseBoolean(value) === undefined) fail(at, `must be ${TYPE_FORMS.boolean}`);
    return value.toLowerCase();
  }
  if (kind === "date" || kind === "createdAt") {
    const time = parseDate(value) ?? (kind === "createdAt" ? timestampOf(value) : undefined);
    if (time === undefined || !(time >= FIRST_TIME && time <= LAST_TIME)) {
      fail(at, `must be ${TYPE_FORMS.date}, in the years 0001 to 9999`);
    }
    return new Date(time as number).toISOString();
  }
  return value;
}

/** createdAt has always taken any ISO 8601 timestamp JavaScript reads (with or without an offset). */
const timestampOf = (text: string): number | undefined =>
  /^\d{4}-\d{2}-\d{2}T/.test(text) && !Number.isNaN(Date.parse(text)) ? Date.parse(text) : undefined;

/** The order of two normalized values of a kind (numbers by value, instants as text sort). */
const orderOf = (kind: FieldType | "createdAt", text: string): number | string =>
  kind === "number" ? (parseNumber(text) as number) : text;

/** Case folding shared by the stored member data and filter values, so both stores agree exactly. */
export const fold = (text: string): string => text.toLowerCase();

/** The case-folded form of a member's data that filters and search compare against. */
export interface FoldedMember {
  id: string;
  email: string | null;
  emails: string[];
  fields: Record<string, string>;
}

export function foldMember(member: {
  id: string;
  email: string | null;
  alternativeEmails: string[];
  fields: Record<string, string>;
}): FoldedMember {
  const emails = [member.email, ...member.alternativeEmails].filter((e): e is string => e !== null).map(fold);
  const fields: Record<string, string> = {};
  for (const [key, value] of Object.entries(member.fields)) if (value !== "") fields[key] = fold(value);
  return { id: fold(member.id), email: member.email === null ? null : fold(member.email), emails, fields };
}

/** The filter of an audience merged from two: either one matching, flattening nested `any`s. */
export function unionFilter(a: Filter | null, b: Filter | null): Filter | null {
  if (a === null) return b;
  if (b === null) return a;
  const parts = (f: Filter) => ("any" in f ? f.any : [f]);
  return { any: [...parts(a), ...parts(b)] };
}

/** The leaves of a filter (conditions and activity conditions), in document order. */
export function leavesOf(filter: Filter | null): Leaf[] {
  if (filter === null) return [];
  if ("all" in filter) return filter.all.flatMap(leavesOf);
  if ("any" in filter) return filter.any.flatMap(leavesOf);
  if ("not" in filter) return leavesOf(filter.not);
  return [filter];
}

/** The conditions on members' data and audiences of a filter, in document order. */
export const conditionsOf = (filter: Filter | null): Condition[] =>
  leavesOf(filter).filter((leaf): leaf is Condition => !isActivity(leaf));

/** The activity conditions of a filter, in document order. */
export const activityConditionsOf = (filter: Filter | null): ActivityCondition[] => leavesOf(filter).filter(isActivity);

/** The conditions of a `where`, as parseFilter counts them. */
export function whereConditions(where: ActivityWhere | undefined): number {
  if (where === undefined) return 0;
  if ("all" in where) return where.all.reduce((n, w) => n + whereConditions(w), 0);
  if ("any" in where) return where.any.reduce((n, w) => n + whereConditions(w), 0);
  if ("not" in where) return whereConditions(where.not);
  return 1;
}

/** How many conditions a filter holds as its limits count them: leaves, and each `where`'s conditions. */
export const conditionCount = (filter: Filter | null): number =>
  leavesOf(filter).reduce((n, leaf) => n + 1 + (isActivity(leaf) ? whereConditions(leaf.where) : 0), 0);

/** Whether the audience with this rule follows the clock: relative-time or activity conditions. */
export const followsClock = (filter: Filter | null): boolean =>
  leavesOf(filter).some((leaf) => isActivity(leaf) || leaf.op === "withinLast" || leaf.op === "notWithinLast");

/** The custom fields a filter reads (keys without `fields.`). */
export const fieldsOf = (filter: Filter | null): string[] => [
  ...new Set(
    conditionsOf(filter)
      .filter((c) => c.field.startsWith("fields."))
      .map((c) => c.field.slice("fields.".length)),
  ),
];

/** The audience conditions of a filter with their pointers (as parseFilter names nodes). */
export function audienceConditions(filter: Filter | null, pointer = "/body/filter"): { id: string; pointer: string }[] {
  if (filter === null) return [];
  if ("all" in filter) return filter.all.flatMap((f, i) => audienceConditions(f, `${pointer}/all/${i}`));
  if ("any" in filter) return filter.any.flatMap((f, i) => audienceConditions(f, `${pointer}/any/${i}`));
  if ("not" in filter) return audienceConditions(filter.not, `${pointer}/not`);
  if (isActivity(filter)) return [];
  return filter.field === "audience" ? [{ id: filter.value as string, pointer: `${pointer}/value` }] : [];
}

/** The relative-time conditions of a filter: the field and the window's duration of each. */
export const timeConditionsOf = (filter: Filter | null): { field: string; duration: string }[] =>
  conditionsOf(filter)
    .filter((c) => c.op === "withinLast" || c.op === "notWithinLast")
    .map((c) => ({ field: c.field, duration: c.value as string }));

/** The audiences a filter's audience conditions name. */
export const audiencesOf = (filter: Filter | null): string[] => [
  ...new Set(
    conditionsOf(filter)
      .filter((c) => c.field === "audience")
      .map((c) => c.value as string),
  ),
];

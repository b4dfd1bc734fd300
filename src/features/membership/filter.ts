import type { components } from "../../../generated/api.d.ts";
import { BadRequestError } from "../../domain/errors.ts";

export type Filter = components["schemas"]["Filter"];
export type Condition = components["schemas"]["FilterCondition"];
export type Op = Condition["op"];

export const MAX_FILTER_DEPTH = 10;
export const MAX_FILTER_CONDITIONS = 100;

const STRING_OPS = new Set<Op>(["eq", "ne", "contains", "startsWith", "endsWith"]);
const LIST_OPS = new Set<Op>(["in", "notIn"]);
const PRESENCE_OPS = new Set<Op>(["exists", "notExists"]);
const TIME_OPS = new Set<Op>(["before", "after"]);
// Timestamps PostgreSQL can hold; the year 0000 and beyond 9999 are refused.
const FIRST_TIME = Date.parse("0001-01-01T00:00:00.000Z");
const LAST_TIME = Date.parse("9999-12-31T23:59:59.999Z");
const FIELD_PATTERN = /^(id|email|anyEmail|createdAt|fields\.[A-Za-z][A-Za-z0-9_]{0,63})$/;

/**
 * Checks a filter a client sent and returns it normalized (timestamps in canonical form), or
 * throws invalid_filter pointing at the first bad node. The contract's schema describes the same
 * language; this is what enforces it, with limits the schema cannot express.
 */
export function parseFilter(input: unknown, pointer = "/body/filter"): Filter {
  let conditions = 0;
  const fail = (at: string, message: string): never => {
    throw new BadRequestError("invalid_filter", `${at} ${message}`, [{ pointer: at, message }]);
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
    if (++conditions > MAX_FILTER_CONDITIONS) fail(at, `exceeds ${MAX_FILTER_CONDITIONS} conditions in all`);
    return parseCondition(record, at, fail);
  };
  return visit(input, pointer, 1);
}

function parseCondition(
  record: Record<string, unknown>,
  at: string,
  fail: (at: string, message: string) => never,
): Condition {
  const unknownKey = Object.keys(record).find((key) => !["field", "op", "value"].includes(key));
  if (unknownKey !== undefined) fail(`${at}/${unknownKey}`, "is not part of a condition (field, op, value)");
  const { field, op, value } = record;
  if (typeof field !== "string" || !FIELD_PATTERN.test(field)) {
    fail(`${at}/field`, "must be id, email, anyEmail, createdAt or fields.<key>");
  }
  const isTime = field === "createdAt";
  const allowed = isTime ? TIME_OPS : new Set([...STRING_OPS, ...LIST_OPS, ...PRESENCE_OPS]);
  if (!allowed.has(op as Op)) {
    fail(`${at}/op`, `must be one of ${[...allowed].join(", ")} for ${String(field)}`);
  }
  const condition = { field, op } as Condition;
  if (PRESENCE_OPS.has(condition.op)) {
    if (value !== undefined) fail(`${at}/value`, `must be absent for ${condition.op}`);
    return condition;
  }
  if (LIST_OPS.has(condition.op)) {
    const ok = Array.isArray(value) && value.length >= 1 && value.length <= 100;
    if (!ok || !(value as unknown[]).every((v) => typeof v === "string" && v.length <= 1024 && !v.includes("\u0000"))) {
      fail(`${at}/value`, "must be a list of 1 to 100 strings of at most 1,024 characters");
    }
    return { ...condition, value: value as string[] };
  }
  if (typeof value !== "string" || value.length > 1024 || value.includes("\u0000")) {
    fail(`${at}/value`, "must be a string of at most 1,024 characters, without NUL");
  }
  if (isTime) {
    const time = Date.parse(value as string);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(value as string) || !(time >= FIRST_TIME && time <= LAST_TIME)) {
      fail(`${at}/value`, "must be an ISO 8601 timestamp in the years 0001 to 9999");
    }
    return { ...condition, value: new Date(time).toISOString() };
  }
  return { ...condition, value: value as string };
}

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

/** Evaluates a filter in process; src/features/membership/filter-sql.ts compiles the same semantics to SQL. */
export function matches(filter: Filter | null, member: FoldedMember, createdAt: Date): boolean {
  if (filter === null) return false;
  if ("all" in filter) return filter.all.every((f) => matches(f, member, createdAt));
  if ("any" in filter) return filter.any.some((f) => matches(f, member, createdAt));
  if ("not" in filter) return !matches(filter.not, member, createdAt);
  const { field, op, value } = filter;
  if (field === "createdAt") {
    const time = Date.parse(value as string);
    return op === "before" ? createdAt.getTime() < time : createdAt.getTime() > time;
  }
  const values = valuesOf(member, field);
  switch (op) {
    case "exists":
      return values.length > 0;
    case "notExists":
      return values.length === 0;
    case "in":
    case "notIn": {
      const list = (value as string[]).map(fold);
      const found = values.some((v) => list.includes(v));
      return op === "in" ? found : !found;
    }
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

/** The filter of an audience merged from two: either one matching, flattening nested `any`s. */
export function unionFilter(a: Filter | null, b: Filter | null): Filter | null {
  if (a === null) return b;
  if (b === null) return a;
  const parts = (f: Filter) => ("any" in f ? f.any : [f]);
  return { any: [...parts(a), ...parts(b)] };
}

/** The conditions of a filter, in document order. */
export function conditionsOf(filter: Filter | null): Condition[] {
  if (filter === null) return [];
  if ("all" in filter) return filter.all.flatMap(conditionsOf);
  if ("any" in filter) return filter.any.flatMap(conditionsOf);
  if ("not" in filter) return conditionsOf(filter.not);
  return [filter];
}

/** The custom fields a filter reads (keys without `fields.`). */
export const fieldsOf = (filter: Filter | null): string[] => [
  ...new Set(
    conditionsOf(filter)
      .filter((c) => c.field.startsWith("fields."))
      .map((c) => c.field.slice("fields.".length)),
  ),
];

/** The audiences a filter's audience conditions name. */
export const audiencesOf = (filter: Filter | null): string[] => [
  ...new Set(
    conditionsOf(filter)
      .filter((c) => c.field === "audience")
      .map((c) => c.value as string),
  ),
];

import { type components, FILTER_OPERATORS } from "@audience-service/client";
import {
  type ActivityRow,
  activityComplete,
  activityFilterOf,
  activityRowOf,
  newActivityRow,
} from "./activity-state.ts";
import { apiField, shownField } from "./field-names.ts";

/**
 * The rule builder's state, apart from React: a rule is a list of conditions and groups of
 * conditions joined by "all" or "any", which is what people build by hand. A filter of another
 * shape (a `not` around a group, groups in groups) is edited as JSON instead (draftOf answers
 * undefined). Every function returns a new draft.
 */
export type Filter = components["schemas"]["Filter"];
export type Condition = components["schemas"]["FilterCondition"];
export type Op = Condition["op"];
export type FieldType = components["schemas"]["FieldType"];
export type Kind = FieldType | "createdAt" | "audience";
export type Match = "all" | "any";

export interface ConditionRow {
  id: number;
  field: string;
  op: Op;
  /** As typed: one value, or a comma-separated list (in, notIn), or "from,to" (between); "" when absent. */
  value: string;
}
export interface GroupRow {
  id: number;
  match: Match;
  rows: Row[];
}
/** A row of the builder: a condition on a field, or on what members did (activity-state.ts). */
export type Row = ConditionRow | ActivityRow;
export type Item = Row | GroupRow;
export const isActivityRow = (item: Item): item is ActivityRow => "kind" in item && item.kind === "activity";
export interface RuleDraft {
  match: Match;
  items: Item[];
  nextId: number;
}

/** The operators of each kind of field, as the contract declares them. */
export const OPS: Record<Kind, readonly Op[]> = FILTER_OPERATORS;

export const OP_LABELS: Record<Op, string> = {
  eq: "is",
  ne: "is not",
  in: "is one of",
  notIn: "is none of",
  contains: "contains",
  startsWith: "starts with",
  endsWith: "ends with",
  exists: "is set",
  notExists: "is not set",
  before: "is before",
  after: "is after",
  gt: "is over",
  gte: "is at least",
  lt: "is under",
  lte: "is at most",
  between: "is between",
  withinLast: "is within the last",
  notWithinLast: "is not within the last",
};

export { apiField, BUILT_IN_FIELDS, shownField } from "./field-names.ts";

const CUSTOM = "fields.";

/** The kind of field a condition reads: its declared type for a custom field, else by name. */
export function kindOf(field: string, types: Record<string, FieldType>): Kind {
  const name = apiField(field);
  if (name === "createdAt" || name === "audience") return name;
  return name.startsWith(CUSTOM) ? (types[name.slice(CUSTOM.length)] ?? "string") : "string";
}

/** The shape of each operator's value: a new operator fails the type check until it is given one. */
const VALUE_SHAPES: Record<Op, "none" | "one" | "list" | "pair" | "duration"> = {
  eq: "one",
  ne: "one",
  in: "list",
  notIn: "list",
  contains: "one",
  startsWith: "one",
  endsWith: "one",
  exists: "none",
  notExists: "none",
  before: "one",
  after: "one",
  gt: "one",
  gte: "one",
  lt: "one",
  lte: "one",
  between: "pair",
  withinLast: "duration",
  notWithinLast: "duration",
};

/** How a condition's value is entered: an audience condition names an audience. */
export function valueShape(op: Op, kind: Kind): "none" | "one" | "list" | "pair" | "duration" | "audience" {
  const shape = VALUE_SHAPES[op];
  return kind === "audience" && shape !== "none" ? "audience" : shape;
}

export const emptyDraft = (): RuleDraft => ({ match: "all", items: [], nextId: 1 });

const isGroup = (item: Item): item is GroupRow => "rows" in item;
const isCondition = (filter: Filter): filter is Condition => "field" in filter;

function rowOf(condition: Condition, id: number): ConditionRow {
  const { value } = condition;
  return {
    id,
    field: shownField(condition.field),
    op: condition.op,
    value: Array.isArray(value) ? value.join(", ") : (value ?? ""),
  };
}

/** The draft of a saved filter, or undefined when its shape is not one the builder shows. */
export function draftOf(filter: Filter | null): RuleDraft | undefined {
  if (filter === null) return emptyDraft();
  let nextId = 1;
  // A condition, or an activity condition (or `not` of one) as the builder draws it.
  const asRow = (node: Filter, id: number): Row | undefined =>
    isCondition(node) ? rowOf(node, id) : activityRowOf(node, id);
  const single = asRow(filter, nextId);
  if (single) return { match: "all", items: [single], nextId: nextId + 1 };
  if (!("all" in filter) && !("any" in filter)) return undefined;
  const match: Match = "all" in filter ? "all" : "any";
  const items: Item[] = [];
  for (const child of "all" in filter ? filter.all : filter.any) {
    const row = asRow(child, nextId);
    if (row) {
      items.push(row);
      nextId++;
      continue;
    }
    if (!("all" in child) && !("any" in child)) return undefined;
    const id = nextId++;
    const rows: Row[] = [];
    for (const member of "all" in child ? child.all : child.any) {
      const inner = asRow(member, nextId++);
      if (!inner) return undefined;
      rows.push(inner);
    }
    items.push({ id, match: "all" in child ? "all" : "any", rows });
  }
  return { match, items, nextId };
}

/** The condition a row stands for (values split as its operator takes them). */
export function conditionOf(row: Row, types: Record<string, FieldType>): Filter {
  if (isActivityRow(row)) return activityFilterOf(row);
  const shape = valueShape(row.op, kindOf(row.field, types));
  const field = apiField(row.field);
  if (shape === "none") return { field, op: row.op };
  if (shape === "list" || shape === "pair") {
    return { field, op: row.op, value: row.value.split(",").map((part) => part.trim()) };
  }
  return { field, op: row.op, value: row.value.trim() };
}

const join = (match: Match, filters: Filter[]): Filter => (match === "all" ? { all: filters } : { any: filters });

/** The filter the draft stands for; null when it has no condition (the audience then has no rule). */
export function filterOf(draft: RuleDraft, types: Record<string, FieldType>): Filter | null {
  const items = draft.items.filter((item) => !isGroup(item) || item.rows.length > 0);
  if (items.length === 0) return null;
  return join(
    draft.match,
    items.map((item) =>
      isGroup(item)
        ? join(
            item.match,
            item.rows.map((row) => conditionOf(row, types)),
          )
        : conditionOf(item, types),
    ),
  );
}

/**
 * The JSON pointer (into the filter filterOf makes) of every row and group, by id: counts per
 * node and the server's errors (`/body/filter/…`) name nodes by these pointers.
 */
export function pointersOf(draft: RuleDraft): Map<number, string> {
  const pointers = new Map<number, string>();
  draft.items
    .filter((item) => !isGroup(item) || item.rows.length > 0)
    .forEach((item, i) => {
      const at = `/${draft.match}/${i}`;
      pointers.set(item.id, at);
      if (!isGroup(item)) return;
      for (const [j, row] of item.rows.entries()) pointers.set(row.id, `${at}/${item.match}/${j}`);
    });
  return pointers;
}

/** The row or group an error's pointer (e.g. /body/filter/all/1/value) is about, if any. */
export function rowAtError(draft: RuleDraft, errorPointer: string): number | undefined {
  const inFilter = errorPointer.replace(/^\/body\/filter/, "");
  let found: { id: number; length: number } | undefined;
  for (const [id, pointer] of pointersOf(draft)) {
    const within = inFilter === pointer || inFilter.startsWith(`${pointer}/`);
    if (within && (!found || pointer.length > found.length)) found = { id, length: pointer.length };
  }
  return found?.id;
}

/** Whether every condition has what its operator needs, so the draft is worth sending. */
export function isComplete(draft: RuleDraft, types: Record<string, FieldType>): boolean {
  return unfinishedRow(draft, types) === undefined;
}

/** The first condition (in reading order) that lacks what its operator needs: its id and its place from 1. */
export function unfinishedRow(
  draft: RuleDraft,
  types: Record<string, FieldType>,
): { id: number; position: number } | undefined {
  const rows = draft.items.flatMap((item) => (isGroup(item) ? item.rows : [item]));
  const index = rows.findIndex((row) => !rowComplete(row, types));
  const row = rows[index];
  return row === undefined ? undefined : { id: row.id, position: index + 1 };
}

function rowComplete(row: Row, types: Record<string, FieldType>): boolean {
  if (isActivityRow(row)) return activityComplete(row);
  if (row.field.trim() === "") return false;
  const shape = valueShape(row.op, kindOf(row.field, types));
  if (shape === "none") return true;
  if (shape === "pair") return row.value.split(",").filter((part) => part.trim() !== "").length === 2;
  return row.value.trim() !== "";
}

/** A new activity condition at the end of the rule (of a type, when the workspace has one). */
export function newActivity(draft: RuleDraft, type = ""): RuleDraft {
  return { ...draft, items: [...draft.items, newActivityRow(draft.nextId, type)], nextId: draft.nextId + 1 };
}

/** An activity row changed. */
export function updateActivity(
  draft: RuleDraft,
  id: number,
  change: Partial<Omit<ActivityRow, "id" | "kind">>,
): RuleDraft {
  const apply = (row: Row): Row => (row.id === id && isActivityRow(row) ? { ...row, ...change } : row);
  return {
    ...draft,
    items: draft.items.map((item) => (isGroup(item) ? { ...item, rows: item.rows.map(apply) } : apply(item))),
  };
}

export function newCondition(draft: RuleDraft, groupId?: number): RuleDraft {
  const row: ConditionRow = { id: draft.nextId, field: "email", op: "endsWith", value: "" };
  const nextId = draft.nextId + 1;
  if (groupId === undefined) return { ...draft, items: [...draft.items, row], nextId };
  return {
    ...draft,
    nextId,
    items: draft.items.map((item) =>
      item.id === groupId && isGroup(item) ? { ...item, rows: [...item.rows, row] } : item,
    ),
  };
}

export function newGroup(draft: RuleDraft): RuleDraft {
  const group: GroupRow = {
    id: draft.nextId,
    match: draft.match === "all" ? "any" : "all",
    rows: [{ id: draft.nextId + 1, field: "email", op: "endsWith", value: "" }],
  };
  return { ...draft, items: [...draft.items, group], nextId: draft.nextId + 2 };
}

/** A row changed; a new field keeps the operator when its kind has it, else takes the kind's first. */
export function updateRow(
  draft: RuleDraft,
  id: number,
  change: Partial<Omit<ConditionRow, "id">>,
  types: Record<string, FieldType>,
): RuleDraft {
  const apply = (row: Row): Row => {
    if (row.id !== id || isActivityRow(row)) return row;
    const next = { ...row, ...change };
    const ops = OPS[kindOf(next.field, types)];
    if (!ops.includes(next.op)) return { ...next, op: ops[0] ?? "eq", value: "" };
    return next;
  };
  return {
    ...draft,
    items: draft.items.map((item) => (isGroup(item) ? { ...item, rows: item.rows.map(apply) } : apply(item))),
  };
}

export function removeRow(draft: RuleDraft, id: number): RuleDraft {
  return {
    ...draft,
    items: draft.items
      .filter((item) => item.id !== id)
      .map((item) => (isGroup(item) ? { ...item, rows: item.rows.filter((row) => row.id !== id) } : item))
      .filter((item) => !isGroup(item) || item.rows.length > 0),
  };
}

export function setMatch(draft: RuleDraft, match: Match, groupId?: number): RuleDraft {
  if (groupId === undefined) return { ...draft, match };
  return {
    ...draft,
    items: draft.items.map((item) => (item.id === groupId && isGroup(item) ? { ...item, match } : item)),
  };
}

export { isGroup };

import { assertNever } from "../../../../domain/assert-never.ts";
import { parseNumber } from "../../../../domain/field-types.ts";
import {
  type ActivityCondition,
  type ActivityWhere,
  activityWindow,
  typeHolds,
  type WhereCondition,
} from "../activity-condition.ts";
import { type Filter, fold, isActivity } from "../filter.ts";

/**
 * What an ingest tells the audiences that count activities (rule-following's followActivities):
 * each stored activity's member number and type, and, when the caller has them, when it occurred
 * and its properties. Without the last two, every activity of a counted type may count.
 */
export interface StoredActivity {
  seq: number;
  type: string;
  occurredAt?: Date | undefined;
  properties?: Record<string, string | number | boolean> | null | undefined;
}

/** Yes, no, or "cannot tell here" (the database would have to say). */
type Maybe = boolean | undefined;

/**
 * Whether an activity condition counts this activity at `now`, as activity-sql.ts's countedSql
 * would: its type, its window (the retention's edge included), its `where`. Undefined where the
 * process cannot be sure of the database's answer (no occurredAt given; a text comparison outside
 * ASCII, where lower() and toLowerCase() may differ).
 */
export function counts(
  condition: ActivityCondition,
  activity: StoredActivity,
  now: number,
  retentionDays: number | undefined,
): Maybe {
  return countsIn(condition, activityWindow(condition, now, retentionDays), activity);
}

/** The window of an activity condition at some instant (activity-condition.ts's activityWindow). */
export type Window = ReturnType<typeof activityWindow>;

/**
 * counts(), with the condition's window given: a batch reads it once per condition, not once per
 * activity (parsing its duration each time was most of a batch's planning).
 */
export function countsIn(condition: ActivityCondition, window: Window, activity: StoredActivity): Maybe {
  if (activity.type !== condition.activity) return false;
  if (activity.occurredAt === undefined) return undefined;
  const at = activity.occurredAt.getTime();
  const { from, to, toOpen } = window;
  if (from !== null && at < from) return false;
  if (to !== null && (toOpen ? at >= to : at > to)) return false;
  if (condition.where === undefined) return true;
  if (activity.properties === undefined) return undefined;
  return whereHolds(condition.where, condition.activity, activity.properties ?? {});
}

/** Kleene's AND / OR / NOT over Maybe. */
const and = (values: Maybe[]): Maybe =>
  values.includes(false) ? false : values.includes(undefined) ? undefined : true;
const or = (values: Maybe[]): Maybe => (values.includes(true) ? true : values.includes(undefined) ? undefined : false);
const not = (value: Maybe): Maybe => (value === undefined ? undefined : !value);

function whereHolds(where: ActivityWhere, type: string, properties: Record<string, string | number | boolean>): Maybe {
  if ("all" in where) return and(where.all.map((w) => whereHolds(w, type, properties)));
  if ("any" in where) return or(where.any.map((w) => whereHolds(w, type, properties)));
  if ("not" in where) return not(whereHolds(where.not, type, properties));
  if (where.field === "type") return typeHolds(where, type);
  const key = where.field.slice("properties.".length);
  return propertyHolds(where, Object.hasOwn(properties, key) ? properties[key] : undefined);
}

const ASCII = /^[ -~]*$/;

/** What propertyHolds reads of a condition's values, worked out once per condition. */
interface Operand {
  numbers: number[];
  /** Whether every value is printable ASCII (where fold and lower() agree). */
  ascii: boolean;
  folded: string[];
  lower: string[];
}

/** Each condition's operand: a batch asks the same condition of every activity. */
const operands = new WeakMap<WhereCondition, Operand>();

function operandOf(condition: WhereCondition): Operand {
  let operand = operands.get(condition);
  if (!operand) {
    const values = Array.isArray(condition.value) ? condition.value : [condition.value ?? ""];
    operand = {
      numbers: values.flatMap((v) => {
        const n = parseNumber(v);
        return n === undefined ? [] : [n];
      }),
      ascii: values.every((v) => ASCII.test(v)),
      folded: values.map(fold),
      lower: values.map((v) => v.toLowerCase()),
    };
    operands.set(condition, operand);
  }
  return operand;
}

/** activity-sql.ts's propertySql, in process: `p` is the property's value, undefined when absent. */
function propertyHolds(condition: WhereCondition, p: string | number | boolean | undefined): Maybe {
  const operand = operandOf(condition);
  const { numbers } = operand;
  const number = typeof p === "number" ? p : undefined;
  // lower() of the database and toLowerCase() agree on printable ASCII; past it, the database decides.
  const text = typeof p === "string" ? p : undefined;
  const textKnown = text === undefined || (operand.ascii && ASCII.test(text));
  // No closures here: this runs for every activity and condition of a batch.
  const op = condition.op;
  switch (op) {
    case "eq":
    case "in":
      return equals(operand, p, textKnown);
    case "ne":
    case "notIn":
      return not(equals(operand, p, textKnown));
    case "contains":
    case "startsWith":
    case "endsWith":
      return text === undefined ? false : textKnown ? textHolds(op, fold(text), operand) : undefined;
    case "gt":
      return number !== undefined && number > (numbers[0] ?? 0);
    case "gte":
      return number !== undefined && number >= (numbers[0] ?? 0);
    case "lt":
      return number !== undefined && number < (numbers[0] ?? 0);
    case "lte":
      return number !== undefined && number <= (numbers[0] ?? 0);
    case "between":
      return number !== undefined && number >= (numbers[0] ?? 0) && number <= (numbers[1] ?? 0);
    case "exists":
      return p !== undefined;
    case "notExists":
      return p === undefined;
    default:
      return assertNever(op, "where operator");
  }
}

/** eq / in: numbers by value, booleans as true/false, text case-folded (undefined past ASCII). */
function equals(operand: Operand, p: string | number | boolean | undefined, textKnown: boolean): Maybe {
  if (typeof p === "number") return operand.numbers.includes(p);
  if (typeof p === "boolean") return operand.lower.includes(String(p));
  if (p === undefined) return false;
  return textKnown ? operand.folded.includes(fold(p)) : undefined;
}

/** contains / startsWith / endsWith of the folded text against the first value, folded. */
function textHolds(op: "contains" | "startsWith" | "endsWith", x: string, operand: Operand): boolean {
  const target = operand.folded[0] ?? fold("");
  if (op === "contains") return x.includes(target);
  return op === "startsWith" ? x.startsWith(target) : x.endsWith(target);
}

/**
 * What a count of at least `least` says of the condition's count test: a count can only be that or
 * more, so `gte 2` holds once two are known, and `lt 2` fails.
 */
export function countAtLeast(condition: ActivityCondition, least: number): Maybe {
  const { op, value } = condition.count ?? { op: "gte" as const, value: 1 };
  switch (op) {
    case "gte":
      return least >= value ? true : undefined;
    case "gt":
    case "ne":
      return least > value ? true : undefined;
    case "lt":
      return least >= value ? false : undefined;
    case "lte":
    case "eq":
      return least > value ? false : undefined;
    default:
      return assertNever(op, "count operator");
  }
}

/** The filter's answer when only some activity conditions are known; field and audience conditions are not. */
export function partialMatch(filter: Filter, known: (condition: ActivityCondition) => Maybe): Maybe {
  if ("all" in filter) return and(filter.all.map((f) => partialMatch(f, known)));
  if ("any" in filter) return or(filter.any.map((f) => partialMatch(f, known)));
  if ("not" in filter) return not(partialMatch(filter.not, known));
  return isActivity(filter) ? known(filter) : undefined;
}

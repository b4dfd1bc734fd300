import type { FilterOperatorOf } from "../../../../generated/filter-operators.ts";
import { Prisma } from "../../../../generated/prisma/client.ts";
import { assertNever } from "../../../domain/assert-never.ts";
import { DATE_PATTERN, type FieldTypes, NUMBER_PATTERN } from "../../../domain/field-types.ts";
import { PLANNED_PER_RUN } from "../../../platform/db/prepared-statements.ts";
import { audienceMemberChunks, bitOf, chunkOf, inChunks, kind, storedHas } from "../member-bits-sql.ts";
import { type ActivityContext, memberActivitySql, workspaceActivitySql } from "./activity-sql.ts";
import { type Condition, type Filter, fold, isActivity, kindOf } from "./filter.ts";
import { windowStart } from "./filter-match.ts";

/** What compiling a rule needs besides the rule: field types and the time it is evaluated at. */
export interface SqlContext extends ActivityContext {
  types: FieldTypes;
  /** The instant relative-time conditions are evaluated at (milliseconds since the epoch). */
  now: number;
  /**
   * The workspace the members are of, when the caller knows it: typed values are then cast
   * behind a test of the member's workspace (whose values all parse) instead of a pattern
   * match of the text, which cost as much again as the cast on a scan of every member; and an
   * audience condition reads the named audience's set once for the statement rather than probing
   * it for each member (see inChunks).
   */
  workspaceId?: string;
  /**
   * The statement tests a few members named by number, not a scan: an audience condition then
   * looks the member's chunk up by key, cheaper than reading the named audience's whole set.
   */
  fewMembers?: boolean;
  /**
   * Columns of `m` that hold some fields' text (a field's name, "fields.plan", to the column),
   * read out of the member's document once by a statement that tests a field many times.
   */
  fieldColumns?: ReadonlyMap<string, Prisma.Sql>;
  /**
   * Columns of `m` that hold some number or date fields' values as typedValueSql casts them, cast
   * once by a statement that compares a field many times: the cast costs more than the comparison.
   */
  valueColumns?: ReadonlyMap<string, Prisma.Sql>;
}

/**
 * Compiles a filter to a parameterized SQL condition over `members AS m` (values are always bound
 * parameters, never SQL text). It compares against m.folded, the member's data case-folded by the
 * service itself, so it agrees exactly with the in-process `matches` (filter-match.ts) on every
 * store. Every leaf yields true or false, never NULL, so NOT is the exact negation.
 */
export function filterSql(filter: Filter | null, context: SqlContext): Prisma.Sql {
  // Whether a rule keeps few of a workspace's members or most decides the plan: one per run.
  return Prisma.sql`${PLANNED_PER_RUN} ${filterCondition(filter, context)}`;
}

/** The conditions on other audiences in a stored rule (a jsonpath over its document). */
export const AUDIENCE_CONDITIONS = Prisma.sql`'lax $.** ? (@.field == "audience")'`;

/** The ids of the audiences a stored rule names, as rows of one text column (SQL over a jsonb expression). */
export const namedAudiencesSql = (filter: Prisma.Sql) =>
  Prisma.sql`SELECT jsonb_path_query(${filter}, ${AUDIENCE_CONDITIONS}) ->> 'value'`;

/** One node of a filter in SQL without the planning mark: for a statement that holds several. */
export const filterNodeSql = (filter: Filter, context: SqlContext): Prisma.Sql => filterCondition(filter, context);

function filterCondition(filter: Filter | null, context: SqlContext): Prisma.Sql {
  if (filter === null) return Prisma.sql`false`;
  if ("all" in filter)
    return Prisma.sql`(${Prisma.join(
      filter.all.map((f) => filterCondition(f, context)),
      " AND ",
    )})`;
  if ("any" in filter)
    return Prisma.sql`(${Prisma.join(
      filter.any.map((f) => filterCondition(f, context)),
      " OR ",
    )})`;
  if ("not" in filter) return Prisma.sql`(NOT ${filterCondition(filter.not, context)})`;
  if (isActivity(filter)) {
    // A scan counts the type's activities once for the statement; a few members count theirs by key.
    return context.workspaceId !== undefined && context.fewMembers !== true
      ? workspaceActivitySql(filter, context, context.workspaceId)
      : memberActivitySql(filter, context);
  }
  return conditionSql(filter, context);
}

const seq = Prisma.sql`m.seq`;
const fieldTextSql = (field: string) => Prisma.sql`(m.folded->'fields'->>${field.slice("fields.".length)}::text)`;

function conditionSql(condition: Condition, context: SqlContext): Prisma.Sql {
  const { field } = condition;
  const fieldText = (name: string) => context.fieldColumns?.get(name) ?? fieldTextSql(name);
  const fieldKind = kindOf(field, context.types);
  switch (fieldKind) {
    case "audience": {
      // The member's bit in that audience's member set: read from the set's chunks, read once for
      // the statement, or probed by key where the statement tests a few members (fewMembers).
      const audienceId = condition.value as string;
      const bit =
        context.workspaceId !== undefined && context.fewMembers !== true
          ? inChunks(audienceMemberChunks(context.workspaceId, audienceId), seq)
          : Prisma.sql`EXISTS (
      SELECT 1 FROM membership_chunks AS ac
      WHERE ac.workspace_id = m.workspace_id AND ac.audience_id = ${audienceId}::text
        AND ac.kind = ${kind("member")} AND ac.chunk = ${chunkOf(seq)} AND ${storedHas("ac", bitOf(seq))})`;
      const op = condition.op as FilterOperatorOf<"audience">;
      return op === "in" ? bit : Prisma.sql`(NOT ${bit})`;
    }
    case "string":
      return stringSql(condition, condition.op as FilterOperatorOf<"string">, fieldText);
    case "boolean": {
      const text = fieldText(field);
      const op = condition.op as FilterOperatorOf<"boolean">;
      switch (op) {
        case "eq":
          return Prisma.sql`coalesce(${text} = ${condition.value as string}::text, false)`;
        case "exists":
        case "notExists":
          return presence(text, op);
        default:
          return assertNever(op, "boolean operator");
      }
    }
    case "number":
    case "date":
    case "createdAt": {
      const op = condition.op as TypedOp;
      if (op === "exists" || op === "notExists") return presence(fieldText(field), op);
      const x =
        fieldKind === "createdAt"
          ? Prisma.sql`m.created_at`
          : (context.valueColumns?.get(field) ?? typedValueSql(fieldText(field), fieldKind, context.workspaceId));
      return comparison(x, op, condition.value, fieldKind === "number" ? "float8" : "timestamptz", context.now);
    }
    default:
      return assertNever(fieldKind, "field kind");
  }
}

type TypedOp = FilterOperatorOf<"number" | "date" | "createdAt">;

/**
 * A number or date field's value (its text, SQL over `m`) as float8 or timestamptz, NULL when the
 * member has none. Stored values of a typed field all parse in their workspace (the declaration
 * and every write check them); the guard keeps the cast from ever seeing another workspace's text,
 * whatever order the database evaluates the conditions in (see SqlContext.workspaceId).
 */
export function typedValueSql(text: Prisma.Sql, fieldKind: "number" | "date", workspaceId?: string): Prisma.Sql {
  const guard =
    workspaceId === undefined
      ? Prisma.sql`${text} ~ ${fieldKind === "number" ? NUMBER_PATTERN : DATE_PATTERN}`
      : Prisma.sql`m.workspace_id = ${workspaceId}::text`;
  return fieldKind === "number"
    ? Prisma.sql`(CASE WHEN ${guard} THEN ${text}::float8 END)`
    : Prisma.sql`(CASE WHEN ${guard} THEN ${instantOf(text)} END)`;
}

/** A date value as an instant, unchecked: a calendar date is its UTC midnight. */
const instantOf = (text: Prisma.Sql) =>
  Prisma.sql`(CASE WHEN length(${text}) = 10 THEN ${text} || 'T00:00:00Z' ELSE ${text} END)::timestamptz`;

/** A date value as an instant, NULL when the text is not one. */
export const dateOf = (text: Prisma.Sql) =>
  Prisma.sql`(CASE WHEN ${text} ~ ${DATE_PATTERN} THEN ${instantOf(text)} END)`;

const presence = (x: Prisma.Sql, op: "exists" | "notExists") =>
  op === "exists" ? Prisma.sql`(${x} IS NOT NULL)` : Prisma.sql`(${x} IS NULL)`;

function comparison(
  x: Prisma.Sql,
  op: Exclude<TypedOp, "exists" | "notExists">,
  value: Condition["value"],
  type: "float8" | "timestamptz",
  now: number,
): Prisma.Sql {
  const cast = Prisma.raw(type);
  const v = (text: string) => Prisma.sql`${text}::${cast}`;
  const compare = (operator: string) => Prisma.sql`coalesce(${x} ${Prisma.raw(operator)} ${v(value as string)}, false)`;
  switch (op) {
    case "eq":
      return compare("=");
    case "gt":
    case "after":
      return compare(">");
    case "gte":
      return compare(">=");
    case "lt":
    case "before":
      return compare("<");
    case "lte":
      return compare("<=");
    case "ne":
      return Prisma.sql`(NOT coalesce(${x} = ${v(value as string)}, false))`;
    case "in":
      return Prisma.sql`coalesce(${x} = ANY(${value as string[]}::${Prisma.raw(`${type}[]`)}), false)`;
    case "notIn":
      return Prisma.sql`(NOT coalesce(${x} = ANY(${value as string[]}::${Prisma.raw(`${type}[]`)}), false))`;
    case "between": {
      const [low, high] = value as [string, string];
      return Prisma.sql`coalesce(${x} BETWEEN ${v(low)} AND ${v(high)}, false)`;
    }
    case "withinLast":
    case "notWithinLast": {
      // The window's ends are computed once, in process (filter-match.ts).
      const from = new Date(windowStart(value as string, now)).toISOString();
      const to = new Date(now).toISOString();
      const within = Prisma.sql`(${x} >= ${from}::timestamptz AND ${x} <= ${to}::timestamptz)`;
      return op === "withinLast"
        ? Prisma.sql`coalesce(${within}, false)`
        : Prisma.sql`coalesce(${x} IS NOT NULL AND NOT ${within}, false)`;
    }
    default:
      return assertNever(op, "operator");
  }
}

function stringSql(
  { field, value }: Condition,
  op: FilterOperatorOf<"string">,
  fieldText: (field: string) => Prisma.Sql,
): Prisma.Sql {
  const negated = op === "ne" || op === "notIn" || op === "notExists";
  const positive = op === "ne" ? "eq" : op === "notIn" ? "in" : op === "notExists" ? "exists" : op;
  const test = (x: Prisma.Sql) => valueTest(x, positive, value);
  let sql: Prisma.Sql;
  if (field === "anyEmail") {
    sql =
      positive === "exists"
        ? Prisma.sql`(jsonb_array_length(coalesce(m.folded->'emails', '[]'::jsonb)) > 0)`
        : Prisma.sql`EXISTS (SELECT 1 FROM jsonb_array_elements_text(coalesce(m.folded->'emails', '[]'::jsonb)) AS e(v) WHERE ${test(Prisma.sql`e.v`)})`;
  } else {
    const column =
      field === "id"
        ? Prisma.sql`(m.folded->>'id')`
        : field === "email"
          ? Prisma.sql`(m.folded->>'email')`
          : fieldText(field);
    sql = Prisma.sql`coalesce(${test(column)}, false)`;
  }
  return negated ? Prisma.sql`(NOT ${sql})` : sql;
}

function valueTest(
  x: Prisma.Sql,
  op: Exclude<FilterOperatorOf<"string">, "ne" | "notIn" | "notExists">,
  value: Condition["value"],
): Prisma.Sql {
  switch (op) {
    case "exists":
      return Prisma.sql`(${x} IS NOT NULL)`;
    case "in":
      return Prisma.sql`(${x} = ANY(${(value as string[]).map(fold)}::text[]))`;
  }
  const target = fold(value as string);
  switch (op) {
    case "eq":
      return Prisma.sql`(${x} = ${target}::text)`;
    case "contains":
      return Prisma.sql`(strpos(${x}, ${target}::text) > 0)`;
    case "startsWith":
      return Prisma.sql`(left(${x}, ${[...target].length}::int) = ${target}::text)`;
    case "endsWith":
      return Prisma.sql`(right(${x}, ${[...target].length}::int) = ${target}::text)`;
    default:
      return assertNever(op, "string operator");
  }
}

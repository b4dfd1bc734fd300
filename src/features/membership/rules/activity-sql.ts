import { Prisma } from "../../../../generated/prisma/client.ts";
import { assertNever } from "../../../domain/assert-never.ts";
import { parseNumber } from "../../../domain/field-types.ts";
import { chunksOf, inChunks } from "../member-bits-sql.ts";
import {
  type ActivityCondition,
  type ActivityWhere,
  activityWindow,
  countHolds,
  typeHolds,
  type WhereCondition,
} from "./activity-condition.ts";
import { fold } from "./filter.ts";

/**
 * Activity conditions in SQL (DESIGN §10). They count rows of `activities AS a` joined to their
 * type (`activity_types AS t`): the condition's type, its window seen at `now` (never before what
 * the retention keeps, so an activity due for the purge no longer counts), and its `where` over the
 * properties. Every test yields true or false, never NULL, so NOT is the exact negation.
 */

/** What compiling an activity condition needs: the time it is evaluated at and what is kept. */
export interface ActivityContext {
  now: number;
  activityRetentionDays?: number | undefined;
}

/**
 * The activities of `a` that the condition counts, as a condition: `type`, how the statement tests
 * the type (a join to activity_types, or the type's number looked up once).
 */
export function countedSql(condition: ActivityCondition, context: ActivityContext, type: Prisma.Sql): Prisma.Sql {
  const { from, to, toOpen } = activityWindow(condition, context.now, context.activityRetentionDays);
  const parts = [type];
  if (from !== null) parts.push(Prisma.sql`a.occurred_at >= ${new Date(from).toISOString()}::timestamptz`);
  if (to !== null) {
    parts.push(Prisma.sql`a.occurred_at ${Prisma.raw(toOpen ? "<" : "<=")} ${new Date(to).toISOString()}::timestamptz`);
  }
  if (condition.where !== undefined) parts.push(whereSql(condition.where, condition.activity));
  return Prisma.sql`(${Prisma.join(parts, " AND ")})`;
}

/** The type test of a statement that joins each activity to its type as `t`. */
export const joinedType = (condition: ActivityCondition) => Prisma.sql`t.type = ${condition.activity}::text`;

const COUNT_SQL = { eq: "=", ne: "<>", gt: ">", gte: ">=", lt: "<", lte: "<=" } as const;

/** `count(*)` (SQL) compared as the condition's count says. */
function countTest(condition: ActivityCondition, count: Prisma.Sql, negated = false): Prisma.Sql {
  const { op, value } = condition.count ?? { op: "gte" as const, value: 1 };
  const test = Prisma.sql`${count} ${Prisma.raw(COUNT_SQL[op])} ${value}::int`;
  return negated ? Prisma.sql`NOT (${test})` : test;
}

/**
 * The condition for the member `m`, one of a few tested by number: its activities counted by
 * key (the primary key leads with the workspace and the member's number).
 */
export function memberActivitySql(condition: ActivityCondition, context: ActivityContext): Prisma.Sql {
  const count = Prisma.sql`(SELECT count(*) FROM activities AS a
      JOIN activity_types AS t ON t.workspace_id = a.workspace_id AND t.type_id = a.type_id
      WHERE a.workspace_id = m.workspace_id AND a.member_seq = m.seq
        AND ${countedSql(condition, context, joinedType(condition))})`;
  return Prisma.sql`(${countTest(condition, count)})`;
}

/**
 * The condition for every member of a workspace at once: the members whose count satisfies it
 * found in one aggregation over the type's activities in the window (read through the index by
 * workspace, type and time), then each member's bit read from that set. A member without activities
 * counts 0: where 0 satisfies the count, the set is of the members it does not hold for.
 */
export function workspaceActivitySql(
  condition: ActivityCondition,
  context: ActivityContext,
  workspaceId: string,
): Prisma.Sql {
  const { members, complement } = activityMemberSet(condition, context, workspaceId);
  // The set as chunks read once for the statement, as an audience condition reads an audience's
  // (inChunks): NOT IN over a subquery too large to hash would scan it again for every member.
  const inSet = inChunks(chunksOf(members), Prisma.sql`m.seq`);
  return complement ? Prisma.sql`(NOT ${inSet})` : inSet;
}

/**
 * The members the condition holds for, as a query of numbers (`seq`) from one aggregation over
 * the type's activities in the window; or, where 0 satisfies the count (`complement`), the members
 * it does not hold for, since a member without activities is in no aggregation.
 */
export function activityMemberSet(
  condition: ActivityCondition,
  context: ActivityContext,
  workspaceId: string,
): { members: Prisma.Sql; complement: boolean } {
  const complement = countHolds(condition, 0);
  const type = Prisma.sql`a.type_id = (SELECT t.type_id FROM activity_types AS t
      WHERE t.workspace_id = ${workspaceId}::text AND t.type = ${condition.activity}::text)`;
  const members = Prisma.sql`SELECT a.member_seq AS seq FROM activities AS a
      WHERE a.workspace_id = ${workspaceId}::text AND ${countedSql(condition, context, type)}
      GROUP BY a.member_seq HAVING ${countTest(condition, Prisma.sql`count(*)`, complement)}`;
  return { members, complement };
}

/** A `where` as a condition over `a.properties`; `type` compares with the condition's type, known here. */
function whereSql(where: ActivityWhere, type: string): Prisma.Sql {
  if ("all" in where)
    return Prisma.sql`(${Prisma.join(
      where.all.map((w) => whereSql(w, type)),
      " AND ",
    )})`;
  if ("any" in where)
    return Prisma.sql`(${Prisma.join(
      where.any.map((w) => whereSql(w, type)),
      " OR ",
    )})`;
  if ("not" in where) return Prisma.sql`(NOT ${whereSql(where.not, type)})`;
  if (where.field === "type") return typeHolds(where, type) ? Prisma.sql`true` : Prisma.sql`false`;
  return propertySql(where, Prisma.sql`(a.properties->${where.field.slice("properties.".length)}::text)`);
}

/** A property condition over `p` (the property's JSON value, SQL NULL when absent). */
function propertySql(condition: WhereCondition, p: Prisma.Sql): Prisma.Sql {
  const op = condition.op;
  const number = Prisma.sql`(CASE WHEN jsonb_typeof(${p}) = 'number' THEN (${p})::float8 END)`;
  const text = Prisma.sql`(CASE WHEN jsonb_typeof(${p}) = 'string' THEN lower(${p} #>> '{}') END)`;
  const bool = Prisma.sql`(CASE WHEN jsonb_typeof(${p}) = 'boolean' THEN ${p}::text END)`;
  const values = Array.isArray(condition.value) ? condition.value : [condition.value ?? ""];
  const numbers = values.flatMap((v) => {
    const n = parseNumber(v);
    return n === undefined ? [] : [n];
  });
  const booleans = values.map((v) => v.toLowerCase()).filter((v) => v === "true" || v === "false");
  const equals = Prisma.sql`coalesce(
    ${number} = ANY(${numbers}::float8[]) OR ${text} = ANY(${values.map(fold)}::text[]) OR ${bool} = ANY(${booleans}::text[]), false)`;
  const compare = (operator: string) =>
    Prisma.sql`coalesce(${number} ${Prisma.raw(operator)} ${numbers[0] ?? 0}::float8, false)`;
  const target = fold(values[0] ?? "");
  switch (op) {
    case "eq":
    case "in":
      return equals;
    case "ne":
    case "notIn":
      return Prisma.sql`(NOT ${equals})`;
    case "contains":
      return Prisma.sql`coalesce(strpos(${text}, ${target}::text) > 0, false)`;
    case "startsWith":
      return Prisma.sql`coalesce(left(${text}, ${[...target].length}::int) = ${target}::text, false)`;
    case "endsWith":
      return Prisma.sql`coalesce(right(${text}, ${[...target].length}::int) = ${target}::text, false)`;
    case "gt":
      return compare(">");
    case "gte":
      return compare(">=");
    case "lt":
      return compare("<");
    case "lte":
      return compare("<=");
    case "between":
      return Prisma.sql`coalesce(${number} BETWEEN ${numbers[0] ?? 0}::float8 AND ${numbers[1] ?? 0}::float8, false)`;
    case "exists":
    case "notExists":
      return Prisma.sql`(${p} IS ${Prisma.raw(op === "exists" ? "NOT NULL" : "NULL")})`;
    default:
      return assertNever(op, "where operator");
  }
}

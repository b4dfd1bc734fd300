import { Prisma } from "../../../generated/prisma/client.ts";
import { PLANNED_PER_RUN } from "../../platform/db/prepared-statements.ts";
import { type Condition, type Filter, fold } from "./filter.ts";

/**
 * Compiles a filter to a parameterized SQL condition over `members AS m` (values are always bound
 * parameters, never SQL text). It compares against m.folded, the member's data case-folded by the
 * service itself, so it agrees exactly with the in-process `matches` on every store. Every leaf
 * yields true or false, never NULL, so NOT is the exact negation.
 */
export function filterSql(filter: Filter | null): Prisma.Sql {
  // Whether a rule keeps few of a workspace's members or most decides the plan: one per run.
  return Prisma.sql`${PLANNED_PER_RUN} ${filterCondition(filter)}`;
}

function filterCondition(filter: Filter | null): Prisma.Sql {
  if (filter === null) return Prisma.sql`false`;
  if ("all" in filter) return Prisma.sql`(${Prisma.join(filter.all.map(filterCondition), " AND ")})`;
  if ("any" in filter) return Prisma.sql`(${Prisma.join(filter.any.map(filterCondition), " OR ")})`;
  if ("not" in filter) return Prisma.sql`(NOT ${filterCondition(filter.not)})`;
  return conditionSql(filter);
}

function conditionSql({ field, op, value }: Condition): Prisma.Sql {
  if (field === "createdAt") {
    const operator = Prisma.raw(op === "before" ? "<" : ">");
    return Prisma.sql`(m.created_at ${operator} ${value as string}::timestamptz)`;
  }
  const negated = op === "ne" || op === "notIn" || op === "notExists";
  const positive = { ne: "eq", notIn: "in", notExists: "exists" }[op as string] ?? op;
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
          : Prisma.sql`(m.folded->'fields'->>${field.slice("fields.".length)}::text)`;
    sql = Prisma.sql`coalesce(${test(column)}, false)`;
  }
  return negated ? Prisma.sql`(NOT ${sql})` : sql;
}

function valueTest(x: Prisma.Sql, op: string, value: Condition["value"]): Prisma.Sql {
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
    default:
      return Prisma.sql`(right(${x}, ${[...target].length}::int) = ${target}::text)`;
  }
}

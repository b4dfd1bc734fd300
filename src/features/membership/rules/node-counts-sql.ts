import { Prisma } from "../../../../generated/prisma/client.ts";
import type { Store } from "../../../platform/db/database.ts";
import { conditionsOf, type Filter, kindOf } from "./filter.ts";
import { filterNodeSql, type SqlContext, typedValueSql } from "./filter-sql.ts";

/**
 * The statement that counts the members every node of a filter matches, in one scan of
 * `members` (the workspace's, `where` over `members AS m`): an array of counts in filterNodes'
 * order. Each condition is evaluated once per member; each node's count is then a test of those
 * values. A count per node over the conditions themselves would evaluate each condition again for
 * every node above it.
 *
 * Its shape follows the store, as measured on a rule of ten conditions over 1,000,000 members:
 *
 * - PostgreSQL: the members are grouped by the conditions' values, the conditions written inline,
 *   and each node's count is a sum over the groups whose values satisfy it. The grouping keys are
 *   booleans (never NULL, see filter-sql.ts): the planner counts two groups per boolean key, so it
 *   expects few groups and aggregates in parallel workers. One integer key packing the conditions
 *   as bits looked to it like a group per member, and kept the scan to one process.
 * - The embedded store, which has no parallel workers: subqueries read the document's fields,
 *   then each field the conditions test (and a number or date field's value, cast), once per
 *   member, and the conditions once (OFFSET 0 keeps the planner from folding them back into the
 *   counts), and each node is counted with a FILTER. Ten conditions on five fields otherwise copy
 *   the member's fields ten times, about a third of the scan, and two comparisons of a number
 *   cast it twice, each cast costing as much as five comparisons. On PostgreSQL the same OFFSET 0
 *   would keep the scan to one process, which costs more.
 */
export function nodeCountsSql(
  filter: Filter,
  context: SqlContext,
  where: Prisma.Sql,
  store: Store["kind"],
): Prisma.Sql {
  const conditions = conditionsOf(filter);
  const key = (k: number) => Prisma.raw(`c${k}`);

  let next = 0;
  const over = (node: Filter): Prisma.Sql => {
    if ("all" in node) return Prisma.sql`(${Prisma.join(node.all.map(over), " AND ")})`;
    if ("any" in node) return Prisma.sql`(${Prisma.join(node.any.map(over), " OR ")})`;
    if ("not" in node) return Prisma.sql`(NOT ${over(node.not)})`;
    return Prisma.sql`x.${key(next++)}`;
  };
  // Each node's conditions are a run of the document order, starting where the node does.
  const tests: Prisma.Sql[] = [];
  let start = 0;
  const visit = (node: Filter) => {
    next = start;
    tests.push(over(node));
    if ("all" in node) node.all.forEach(visit);
    else if ("any" in node) node.any.forEach(visit);
    else if ("not" in node) visit(node.not);
    else start++;
  };
  visit(filter);

  if (store === "postgres") {
    const values = conditions.map((c, k) => Prisma.sql`${filterNodeSql(c, context)} AS ${key(k)}`);
    const counts = tests.map((test) => Prisma.sql`coalesce(sum(x.n) FILTER (WHERE ${test}), 0)::int`);
    return Prisma.sql`SELECT ARRAY[${Prisma.join(counts)}]::int[] AS counts FROM (
      SELECT ${Prisma.join(values)}, count(*) AS n FROM members AS m WHERE ${where}
      GROUP BY ${Prisma.join(conditions.map((_, k) => key(k)))}
    ) AS x`;
  }
  const fields = [...new Set(conditions.map((c) => c.field).filter((field) => field.startsWith("fields.")))];
  const column = (name: string) => Prisma.raw(`m.${name}`);
  // Each field's text, and a number or date field's value cast once too: a cast costs more than
  // the comparisons. The database drops the columns no condition reads.
  const read: Prisma.Sql[] = [];
  const fieldColumns = new Map<string, Prisma.Sql>();
  const valueColumns = new Map<string, Prisma.Sql>();
  fields.forEach((field, k) => {
    const text = Prisma.sql`(m.fields->>${field.slice("fields.".length)}::text)`;
    read.push(Prisma.sql`${text} AS ${Prisma.raw(`f${k}`)}`);
    fieldColumns.set(field, column(`f${k}`));
    const fieldKind = kindOf(field, context.types);
    if (fieldKind !== "number" && fieldKind !== "date") return;
    const value = typedValueSql(field, fieldKind, { ...context, fieldColumns: new Map([[field, text]]) });
    read.push(Prisma.sql`${value} AS ${Prisma.raw(`v${k}`)}`);
    valueColumns.set(field, column(`v${k}`));
  });
  const values = conditions.map(
    (c, k) => Prisma.sql`${filterNodeSql(c, { ...context, fieldColumns, valueColumns })} AS ${key(k)}`,
  );
  const counts = tests.map((test) => Prisma.sql`count(*) FILTER (WHERE ${test})::int`);
  // The conditions read members' other columns too: the workspace (a typed field's guard), the
  // number (an audience's bit), the creation time, the document (ids, e-mail addresses).
  const columns = Prisma.sql`m.workspace_id, m.seq, m.created_at, m.folded`;
  return Prisma.sql`SELECT ARRAY[${Prisma.join(counts)}]::int[] AS counts FROM (
    SELECT ${Prisma.join(values)} FROM (
      SELECT ${Prisma.join([columns, ...read])} FROM (
        SELECT ${columns}, m.folded->'fields' AS fields FROM members AS m WHERE ${where} OFFSET 0
      ) AS m OFFSET 0
    ) AS m OFFSET 0
  ) AS x`;
}

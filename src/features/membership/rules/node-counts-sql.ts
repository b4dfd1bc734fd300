import { Prisma } from "../../../../generated/prisma/client.ts";
import { conditionsOf, type Filter } from "./filter.ts";
import { filterNodeSql, type SqlContext } from "./filter-sql.ts";

/**
 * The statement that counts the members every node of a filter matches, in one scan of
 * `members` (the workspace's, `where` over `members AS m`): an array of counts in filterNodes'
 * order. Each condition is evaluated once per member, and the members are grouped by the
 * conditions' values; each node's count is then a sum over those few groups whose values satisfy
 * it. A count per node over the conditions themselves would evaluate each condition again for
 * every node above it.
 *
 * The grouping keys are the conditions themselves, booleans (never NULL, see filter-sql.ts): the
 * planner counts two groups per boolean key, so for a rule of a few conditions it expects few
 * groups and aggregates in parallel workers. One integer key packing the conditions as bits
 * looked to it like a group per member, and kept the scan to one process (and compiled by JIT).
 */
export function nodeCountsSql(filter: Filter, context: SqlContext, where: Prisma.Sql): Prisma.Sql {
  const conditions = conditionsOf(filter);
  const key = (k: number) => Prisma.raw(`c${k}`);
  const keys = Prisma.join(conditions.map((_, k) => key(k)));

  let next = 0;
  const over = (node: Filter): Prisma.Sql => {
    if ("all" in node) return Prisma.sql`(${Prisma.join(node.all.map(over), " AND ")})`;
    if ("any" in node) return Prisma.sql`(${Prisma.join(node.any.map(over), " OR ")})`;
    if ("not" in node) return Prisma.sql`(NOT ${over(node.not)})`;
    return Prisma.sql`x.${key(next++)}`;
  };
  // Each node's conditions are a run of the document order, starting where the node does.
  const counts: Prisma.Sql[] = [];
  let start = 0;
  const visit = (node: Filter) => {
    next = start;
    counts.push(Prisma.sql`coalesce(sum(x.n) FILTER (WHERE ${over(node)}), 0)::int`);
    if ("all" in node) node.all.forEach(visit);
    else if ("any" in node) node.any.forEach(visit);
    else if ("not" in node) visit(node.not);
    else start++;
  };
  visit(filter);
  const values = conditions.map((c, k) => Prisma.sql`${filterNodeSql(c, context)} AS ${key(k)}`);
  return Prisma.sql`SELECT ARRAY[${Prisma.join(counts)}]::int[] AS counts FROM (
    SELECT ${Prisma.join(values)}, count(*) AS n FROM members AS m WHERE ${where} GROUP BY ${keys}
  ) AS x`;
}

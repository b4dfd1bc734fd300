import { Prisma } from "../../../../generated/prisma/client.ts";
import { conditionsOf, type Filter } from "./filter.ts";
import { filterNodeSql, type SqlContext } from "./filter-sql.ts";

// Bits of an int8 a mask uses (the sign bit left alone).
const BITS = 62;

/**
 * The statement that counts the members every node of a filter matches, in one scan of
 * `members` (the workspace's, `where` over `members AS m`): an array of counts in filterNodes'
 * order. Each condition is evaluated once per member into bit masks, and the members are grouped
 * by their masks (a grouping key is computed once per row, and the scan stays a plain parallel
 * aggregate); each node's count is then a sum over those few groups whose masks satisfy it. A
 * count per node over the conditions themselves would evaluate each condition again for every
 * node above it, and masks from a function scan per member cost a function call per member.
 */
export function nodeCountsSql(filter: Filter, context: SqlContext, where: Prisma.Sql): Prisma.Sql {
  const conditions = conditionsOf(filter);
  const words = Array.from({ length: Math.ceil(conditions.length / BITS) }, (_, w) =>
    conditions.slice(w * BITS, (w + 1) * BITS),
  );
  const masks = words.map(
    (word, w) =>
      Prisma.sql`(${Prisma.join(
        word.map((c, i) => Prisma.sql`(CASE WHEN ${filterNodeSql(c, context)} THEN ${bit(i)} ELSE 0 END)`),
        " + ",
      )})::int8 AS ${Prisma.raw(`b${w}`)}`,
  );
  const names = Prisma.raw(words.map((_, w) => `b${w}`).join(", "));

  let next = 0;
  const over = (node: Filter): Prisma.Sql => {
    if ("all" in node) return Prisma.sql`(${Prisma.join(node.all.map(over), " AND ")})`;
    if ("any" in node) return Prisma.sql`(${Prisma.join(node.any.map(over), " OR ")})`;
    if ("not" in node) return Prisma.sql`(NOT ${over(node.not)})`;
    const k = next++;
    return Prisma.sql`((x.${Prisma.raw(`b${Math.floor(k / BITS)}`)} & ${bit(k % BITS)}) <> 0)`;
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
  return Prisma.sql`SELECT ARRAY[${Prisma.join(counts)}]::int[] AS counts FROM (
    SELECT ${Prisma.join(masks)}, count(*) AS n FROM members AS m WHERE ${where} GROUP BY ${names}
  ) AS x`;
}

const bit = (i: number) => Prisma.raw(`${2n ** BigInt(i)}::int8`);

import { Prisma } from "../../../../generated/prisma/client.ts";
import { conditionsOf, type Filter } from "./filter.ts";
import { filterNodeSql, type SqlContext } from "./filter-sql.ts";

// Bits of an int8 a mask uses (the sign bit left alone).
const BITS = 62;

/**
 * The pieces of a statement that counts the members every node of a filter matches in one scan
 * (over `members AS m`). Each condition is evaluated once per member, into bit masks computed in a
 * lateral function scan (`joinMasks`), which the planner neither inlines nor copies; every node's
 * count is then a FILTER over those bits (`counts`, one per node in filterNodes' order). A count
 * per node over the conditions themselves would evaluate each condition again for every node
 * above it.
 */
export function nodeCountsSql(filter: Filter, context: SqlContext): { joinMasks: Prisma.Sql; counts: Prisma.Sql } {
  const conditions = conditionsOf(filter);
  const words = Array.from({ length: Math.ceil(conditions.length / BITS) }, (_, w) =>
    conditions.slice(w * BITS, (w + 1) * BITS),
  );
  const masks = words.map(
    (word) =>
      Prisma.sql`ARRAY[(${Prisma.join(
        word.map((c, i) => Prisma.sql`(CASE WHEN ${filterNodeSql(c, context)} THEN ${bit(i)} ELSE 0 END)`),
        " + ",
      )})::int8]`,
  );
  const names = words.map((_, w) => `b${w}`).join(", ");
  const joinMasks = Prisma.sql`CROSS JOIN LATERAL unnest(${Prisma.join(masks)}) AS x(${Prisma.raw(names)})`;

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
    counts.push(Prisma.sql`count(*) FILTER (WHERE ${over(node)})::int`);
    if ("all" in node) node.all.forEach(visit);
    else if ("any" in node) node.any.forEach(visit);
    else if ("not" in node) visit(node.not);
    else start++;
  };
  visit(filter);
  return { joinMasks, counts: Prisma.join(counts) };
}

const bit = (i: number) => Prisma.raw(`${2n ** BigInt(i)}::int8`);

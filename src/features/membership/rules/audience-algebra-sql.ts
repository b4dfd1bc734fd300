import { Prisma } from "../../../../generated/prisma/client.ts";
import { audienceMemberChunks, chunksOf, NO_BITS } from "../member-bits-sql.ts";
import { type ActivityContext, activityMemberSet } from "./activity-sql.ts";
import { type Condition, type Filter, isActivity } from "./filter.ts";
import { filterSql, type SqlContext } from "./filter-sql.ts";

/**
 * A rule made only of audience and activity conditions ("in Newsletter and not in Customers",
 * "ordered twice in 30 days and not in Customers") is set algebra on the named audiences' member
 * chunks and on the members each activity condition's aggregation finds: AND, OR and AND NOT of a few hundred chunks instead of a
 * test of every member. Each node compiles to a set of chunks (rows chunk, bits) and whether it
 * stands for that set or for its complement, so that `notIn` needs no set of every member unless
 * the whole rule is a complement (then it is taken from the members' numbers once).
 */
interface SetNode {
  /** A query of rows (chunk, bits). */
  rows: Prisma.Sql;
  /** The node is every member except these. */
  complement: boolean;
}

/**
 * The chunks of the members a rule matches: by set algebra on the named audiences' chunks when
 * the rule is made only of audience conditions, else by testing every member of the workspace.
 */
export const matchingChunks = (workspaceId: string, filter: Filter | null, context: SqlContext): Prisma.Sql =>
  audienceAlgebraSql(workspaceId, filter, context) ??
  chunksOf(
    Prisma.sql`SELECT m.seq FROM members AS m WHERE m.workspace_id = ${workspaceId} AND ${filterSql(filter, context)}`,
  );

/** The rows (chunk, bits) of the members the rule matches, or null when it is not pure set algebra. */
export function audienceAlgebraSql(
  workspaceId: string,
  filter: Filter | null,
  context: ActivityContext,
): Prisma.Sql | null {
  if (filter === null || !onlyAudiences(filter)) return null;
  const node = compile(workspaceId, filter, context);
  if (!node.complement) return node.rows;
  const everyone = chunksOf(Prisma.sql`SELECT m.seq FROM members AS m WHERE m.workspace_id = ${workspaceId}`);
  return minus(everyone, node.rows);
}

function onlyAudiences(filter: Filter): boolean {
  if ("all" in filter) return filter.all.every(onlyAudiences);
  if ("any" in filter) return filter.any.every(onlyAudiences);
  if ("not" in filter) return onlyAudiences(filter.not);
  return isActivity(filter) || filter.field === "audience";
}

function compile(workspaceId: string, filter: Filter, context: ActivityContext): SetNode {
  if ("not" in filter) {
    const inner = compile(workspaceId, filter.not, context);
    return { rows: inner.rows, complement: !inner.complement };
  }
  if ("all" in filter || "any" in filter) {
    const parts = ("all" in filter ? filter.all : filter.any).map((f) => compile(workspaceId, f, context));
    const plain = parts.filter((p) => !p.complement).map((p) => p.rows);
    const complements = parts.filter((p) => p.complement).map((p) => p.rows);
    if ("all" in filter) {
      // A ∧ B ∧ ¬C ∧ ¬D = (A ∧ B) ∖ (C ∨ D); with no plain part, ¬(C ∨ D).
      if (plain.length === 0) return { rows: union(complements), complement: true };
      return {
        rows: complements.length === 0 ? intersection(plain) : minus(intersection(plain), union(complements)),
        complement: false,
      };
    }
    // A ∨ B ∨ ¬C ∨ ¬D = ¬((C ∧ D) ∖ (A ∨ B)); with no complement, A ∨ B.
    if (complements.length === 0) return { rows: union(plain), complement: false };
    return {
      rows: plain.length === 0 ? intersection(complements) : minus(intersection(complements), union(plain)),
      complement: true,
    };
  }
  if (isActivity(filter)) {
    // One aggregation over the type's activities: the set, or its complement (activity-sql.ts).
    const { members, complement } = activityMemberSet(filter, context, workspaceId);
    return { rows: chunksOf(members), complement };
  }
  // onlyAudiences let only audience and activity conditions through.
  const condition = filter as Condition;
  return { rows: audienceMemberChunks(workspaceId, condition.value as string), complement: condition.op === "notIn" };
}

/** Chunks present in every set, their bits ANDed. */
function intersection(sets: Prisma.Sql[]): Prisma.Sql {
  if (sets.length === 1) return sets[0] as Prisma.Sql;
  const aliases = sets.map((_, i) => Prisma.raw(`s${i}`));
  const joins = sets
    .slice(1)
    .map((set, i) => Prisma.sql`JOIN (${set}) AS ${aliases[i + 1] as Prisma.Sql} USING (chunk)`);
  const bits = Prisma.join(
    aliases.map((alias) => Prisma.sql`${alias}.bits`),
    " & ",
  );
  return Prisma.sql`SELECT chunk, ${bits} AS bits FROM (${sets[0] as Prisma.Sql}) AS s0 ${Prisma.join(joins, " ")}`;
}

/** Chunks present in any set, their bits ORed. */
function union(sets: Prisma.Sql[]): Prisma.Sql {
  if (sets.length === 1) return sets[0] as Prisma.Sql;
  const all = Prisma.join(
    sets.map((set) => Prisma.sql`SELECT chunk, bits FROM (${set}) AS u`),
    " UNION ALL ",
  );
  return Prisma.sql`SELECT chunk, bit_or(bits) AS bits FROM (${all}) AS a GROUP BY chunk`;
}

/** The first set's chunks with the second's bits cleared. */
function minus(from: Prisma.Sql, taken: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`SELECT f.chunk, f.bits & ~coalesce(t.bits, ${NO_BITS}) AS bits
    FROM (${from}) AS f LEFT JOIN (${taken}) AS t USING (chunk)`;
}

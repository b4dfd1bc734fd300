import { BadRequestError } from "../../../domain/errors.ts";
import type { FieldTypes } from "../../../domain/field-types.ts";
import type { SqlClient } from "../../../platform/db/sql-client.ts";
import { type Condition, type Filter, isActivity, kindOf, whereConditions } from "./filter.ts";
import type { FilterCostRepo } from "./filter-cost-repo.ts";

/**
 * What evaluating a filter costs per member, in units of one simple condition: a field read out of
 * the member's document and compared once. Measured on the embedded store, where a statement
 * cannot be interrupted once it runs (scripts/filter-cost-calibrate.ts; the figures are in the
 * commit that set them). Each condition is counted as if evaluated for every member, which an
 * `any` of conditions no member meets, or `nodeCounts`, makes true.
 */
export const CONDITION_COSTS = {
  /** eq, ne, exists, a comparison of createdAt, a boolean: one read and one comparison. */
  simple: 1,
  /** Each value of in and notIn beyond the first, compared in turn. */
  perValue: 0.01,
  /** Each character of a contains, startsWith or endsWith value. */
  perCharacter: 0.001,
  /**
   * A number or date field's text cast to its type and compared as such: measured at 3 to 5
   * simple conditions, weighed lower so that ordinary rules on a number (the benchmark's, two of
   * ten conditions) stay accepted at a million members.
   */
  typed: 2,
  /** anyEmail: the member's addresses unnested and each compared, instead of one read. */
  anyEmail: 12,
  /**
   * A condition on an audience: the member's bit read from that audience's chunks, read once per
   * statement (member-bits-sql.ts's inChunks), which costs about what a simple condition does.
   */
  audience: 1,
  /**
   * A condition on activities: the type's activities in the window aggregated once per statement
   * (activity-sql.ts), then each member tested against the set; and each condition of its
   * `where`, evaluated for each activity counted.
   */
  activity: 4,
  perWhereCondition: 1,
} as const;

/**
 * What each kind of work costs beside a preview, which reads the members twice (its count, then
 * its page): nodeCounts counts every node beside the page, without the short cuts of `all` and
 * `any`; the dry run, and a rule set on the whole workspace, read them once.
 */
export const WORK_FACTORS = { preview: 1, nodeCounts: 1.25, dryRun: 0.6, rule: 0.6 } as const;
export type FilterWork = keyof typeof WORK_FACTORS;

const WORK_NAMES: Record<FilterWork, string> = {
  preview: "a preview",
  rule: "a rule",
  dryRun: "a dry run",
  nodeCounts: "a preview with nodeCounts",
};

/** The cost per member of one condition (see CONDITION_COSTS). */
export function conditionCost(condition: Condition, types: FieldTypes): number {
  const c = CONDITION_COSTS;
  const kind = kindOf(condition.field, types);
  if (kind === "audience") return c.audience;
  const values = Array.isArray(condition.value)
    ? condition.value
    : condition.value === undefined
      ? []
      : [condition.value];
  let cost = c.simple;
  if (condition.op === "in" || condition.op === "notIn") cost += c.perValue * Math.max(0, values.length - 1);
  if (condition.op === "contains" || condition.op === "startsWith" || condition.op === "endsWith") {
    cost += c.perCharacter * [...(values[0] ?? "")].length;
  }
  if ((kind === "number" || kind === "date") && condition.op !== "exists" && condition.op !== "notExists") {
    cost += c.typed;
  }
  return condition.field === "anyEmail" ? cost * c.anyEmail : cost;
}

/** Each condition of a filter with its pointer (as parseFilter names nodes) and its cost per member. */
export function conditionCosts(
  filter: Filter,
  types: FieldTypes,
  pointer: string,
): { pointer: string; cost: number }[] {
  if ("all" in filter) return filter.all.flatMap((f, i) => conditionCosts(f, types, `${pointer}/all/${i}`));
  if ("any" in filter) return filter.any.flatMap((f, i) => conditionCosts(f, types, `${pointer}/any/${i}`));
  if ("not" in filter) return conditionCosts(filter.not, types, `${pointer}/not`);
  if (isActivity(filter)) {
    const c = CONDITION_COSTS;
    return [{ pointer, cost: c.activity + c.perWhereCondition * whereConditions(filter.where) }];
  }
  return [{ pointer, cost: conditionCost(filter, types) }];
}

/** The costliest conditions named in a refusal. */
const NAMED = 3;

const figure = (n: number) => Math.round(n).toLocaleString("en-US");

/**
 * Refuses (400 filter_too_costly) a filter whose cost per member, times the kind of work, times the
 * workspace's members, exceeds the budget (FILTER_COST_BUDGET; 0: no bound). Checked before the
 * filter runs: on the embedded store a running statement holds every other request of the process.
 */
export function checkFilterCost(
  filter: Filter,
  types: FieldTypes,
  members: number,
  work: FilterWork,
  budget: number,
  pointer = "/body/filter",
): void {
  if (budget <= 0) return;
  const conditions = conditionCosts(filter, types, pointer);
  const perMember = conditions.reduce((sum, c) => sum + c.cost, 0);
  const cost = perMember * WORK_FACTORS[work] * members;
  if (cost <= budget) return;
  const costliest = [...conditions].sort((a, b) => b.cost - a.cost).slice(0, NAMED);
  throw new BadRequestError(
    "filter_too_costly",
    `Evaluating this filter as ${WORK_NAMES[work]} over the workspace's ${figure(members)} members would cost ` +
      `${figure(cost)}, more than the ${figure(budget)} the server allows (${perMember.toFixed(1)} per member, ` +
      `in units of one simple condition); simplify the costliest conditions, or use fewer values or shorter ones.`,
    costliest.map((c) => ({
      pointer: c.pointer,
      message: `costs ${c.cost.toFixed(1)} per member of the filter's ${perMember.toFixed(1)}`,
    })),
  );
}

/** The check as the services call it: the workspace's size read (unless given), then checkFilterCost. */
export function createFilterCostCheck({
  repo,
  budget,
}: {
  repo: Pick<FilterCostRepo, "memberNumbers">;
  budget: number;
}) {
  return async (
    db: SqlClient,
    workspaceId: string,
    filter: Filter | null,
    types: FieldTypes,
    work: FilterWork,
    memberNumbers?: number,
  ) => {
    if (filter === null || budget <= 0) return;
    checkFilterCost(filter, types, memberNumbers ?? (await repo.memberNumbers(db, workspaceId)), work, budget);
  };
}

export type FilterCostCheck = ReturnType<typeof createFilterCostCheck>;

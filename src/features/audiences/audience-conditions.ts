import {
  AppError,
  AudienceArchivedError,
  audienceLabel,
  BadRequestError,
  ConflictError,
  NotFoundError,
} from "../../domain/errors.ts";
import type { AudienceRow } from "../membership/audience-repo.ts";
import type { MembershipWriter } from "../membership/membership-service.ts";
import {
  type AudienceGraph,
  audienceGraph,
  checkNewRule,
  leadsTo,
  MAX_CHAIN,
  MAX_RULE_REACH,
} from "../membership/rules/audience-graph.ts";
import { audienceConditions, audiencesOf, type Filter } from "../membership/rules/filter.ts";
import { filterLimitProblem, workspaceBoundProblem } from "../membership/rules/rule-bounds.ts";

type Named = { id: string; pointer: string };

const unknownAudience = ({ id, pointer }: Named) =>
  new BadRequestError("invalid_filter", `${pointer} names ${id}, no audience of this workspace`, [
    { pointer, message: "names no audience of this workspace" },
  ]);

/** The name, when the lock that refused it read the audience. */
const nameIn = (error: unknown) => (error instanceof AudienceArchivedError ? error.audienceName : undefined);

const archivedAudience = ({ id }: Named, name: string | undefined) =>
  new ConflictError(
    "audience_archived",
    `The filter names audience ${audienceLabel(id, name)}, which is archived; restore it or name another.`,
  );

/**
 * The audiences a new rule of audience `id` names must be the workspace's (400 invalid_filter at
 * the condition), unarchived (409 audience_archived; they are locked to be read, so none is
 * archived before this write commits), not lead back to it (400 filter_cycle), and make no chain
 * of audience conditions longer than MAX_CHAIN nor any rule reach more than MAX_RULE_REACH
 * audiences (400 invalid_filter).
 */
export async function checkNamedAudiences(w: MembershipWriter, id: string, filter: Filter | null): Promise<void> {
  const conditions = audienceConditions(filter);
  if (conditions.length === 0) return;
  const named = [...new Set(conditions.map((c) => c.id))];
  const graph = audienceGraph(await w.namingAudiences());
  const problem = checkNewRule(graph, id, named);
  let locked: Map<string, AudienceRow>;
  try {
    locked = await w.locks.sources(named);
  } catch (error) {
    // The locks name the audience they refused in their detail.
    const condition = conditions.find((c) => error instanceof AppError && error.detail.includes(c.id));
    if (condition && error instanceof NotFoundError) throw unknownAudience(condition);
    if (condition && error instanceof ConflictError) throw archivedAudience(condition, nameIn(error));
    throw error;
  }
  throwChainProblem(problem, conditions, { graph, id, nameOf: (named) => locked.get(named)?.name });
}

/** What names the audience a cycle goes through: the graph the rule was checked on, and names by id. */
interface CycleContext {
  graph: AudienceGraph;
  /** The audience whose rule is checked. */
  id: string;
  nameOf(id: string): string | undefined;
}

/**
 * 400 for a rule that would lead back to its audience (filter_cycle, naming the audiences that
 * do, at their conditions), chain or reach too many audiences.
 */
export function throwChainProblem(
  problem: ReturnType<typeof checkNewRule>,
  conditions: Named[],
  cycle: CycleContext,
): void {
  if (problem === "cycle") {
    const back = conditions.filter((c) => leadsTo(cycle.graph, c.id, cycle.id));
    const labels = [...new Set(back.map((c) => audienceLabel(c.id, cycle.nameOf(c.id))))];
    throw new BadRequestError(
      "filter_cycle",
      `The filter names ${labels.length === 1 ? "audience" : "audiences"} ${labels.join(", ")}, whose rule leads back to this audience.`,
      back.map(({ pointer }) => ({ pointer, message: "leads back to this audience" })),
    );
  }
  if (problem === "too deep") {
    throw new BadRequestError(
      "invalid_filter",
      `Audience conditions would chain more than ${MAX_CHAIN} audiences.`,
      conditions.map(({ pointer }) => ({ pointer, message: `chains more than ${MAX_CHAIN} audiences` })),
    );
  }
  if (problem === "too wide") {
    throw new BadRequestError(
      "invalid_filter",
      `Audience conditions would make a rule reach more than ${MAX_RULE_REACH} audiences, directly or through the rules of the audiences it names.`,
      conditions.map(({ pointer }) => ({ pointer, message: `reaches more than ${MAX_RULE_REACH} audiences` })),
    );
  }
}

/** A previewed filter names audiences as a saved one would: the workspace's, unarchived. */
export async function checkPreviewAudiences(
  filter: Filter,
  find: (id: string) => Promise<Pick<AudienceRow, "isArchived" | "name"> | null>,
): Promise<void> {
  for (const condition of audienceConditions(filter)) {
    const row = await find(condition.id);
    if (!row) throw unknownAudience(condition);
    if (row.isArchived) throw archivedAudience(condition, row.name);
  }
}

/**
 * A previewed change of audience `id`'s rule is checked as saving it would be: the audiences it
 * names as checkPreviewAudiences, then no cycle and no chain too long (checkNamedAudiences).
 */
export async function checkPreviewRule(
  id: string,
  filter: Filter | null,
  find: (id: string) => Promise<Pick<AudienceRow, "isArchived" | "name"> | null>,
  rules: () => Promise<{ id: string; filter: Filter | null }[]>,
): Promise<void> {
  if (filter === null) return;
  const conditions = audienceConditions(filter);
  if (conditions.length === 0) return;
  const found = new Map<string, string>();
  await checkPreviewAudiences(filter, async (named) => {
    const row = await find(named);
    if (row) found.set(named, row.name);
    return row;
  });
  const named = [...new Set(conditions.map((c) => c.id))];
  const graph = audienceGraph(await rules());
  throwChainProblem(checkNewRule(graph, id, named), conditions, { graph, id, nameOf: (n) => found.get(n) });
}

/**
 * The rules of the workspace (archived audiences' included) would stay within its bounds with
 * `filter` as audience `id`'s rule (409 rule_limit_exceeded otherwise). Read under the member
 * lock, which every change of a rule takes: no other rule changes before this one commits.
 */
export async function checkWorkspaceBounds(
  rules: () => Promise<{ id: string; filter: Filter | null }[]>,
  id: string,
  filter: Filter | null,
): Promise<void> {
  const problem = workspaceBoundProblem(await rules(), id, filter);
  if (problem !== undefined) throw new ConflictError("rule_limit_exceeded", problem);
}

/**
 * A merged audience's rule (the `any` of its sources') keeps the limits of a rule a client sends
 * (400 invalid_filter at /body/audienceIds) and the workspace's bounds (409).
 */
export async function checkMergedRule(
  w: MembershipWriter,
  mergedId: string,
  filter: Filter | null,
  rules: () => Promise<{ id: string; filter: Filter | null }[]>,
): Promise<void> {
  const tooBig = filterLimitProblem(filter);
  if (tooBig !== undefined) throw mergeRefused(`The merged rule ${tooBig}.`, tooBig);
  const named = audiencesOf(filter);
  if (named.length > 0) {
    const problem = checkNewRule(audienceGraph(await w.namingAudiences()), mergedId, named);
    // Nothing names a new audience: its chain is its sources' longest, so only what it reaches
    // can break a bound (unless the graph was made before the bounds).
    if (problem !== null) {
      const message =
        problem === "too wide"
          ? `would reach more than ${MAX_RULE_REACH} audiences through audience conditions`
          : `would chain more than ${MAX_CHAIN} audiences`;
      throw mergeRefused(`The merged rule ${message}.`, message);
    }
  }
  await checkWorkspaceBounds(rules, mergedId, filter);
}

const mergeRefused = (detail: string, message: string) =>
  new BadRequestError("invalid_filter", detail, [{ pointer: "/body/audienceIds", message }]);

/**
 * The audiences an archived audience's rule names are unarchived (409 audience_archived naming
 * the first that is not): restored, it would otherwise follow an audience no write may change,
 * a state setAudienceFilter refuses. They are locked as sources (FOR SHARE), so none is archived
 * before the restore commits.
 */
export async function checkRestoredRule(w: MembershipWriter, filter: Filter | null): Promise<void> {
  const named = audiencesOf(filter).sort();
  if (named.length === 0) return;
  try {
    await w.locks.sources(named);
  } catch (error) {
    const archived = named.find((id) => error instanceof ConflictError && error.detail.includes(id));
    if (archived === undefined) throw error;
    throw new ConflictError(
      "audience_archived",
      `The rule of this audience names audience ${audienceLabel(archived, nameIn(error))}, which is archived; restore it first.`,
      { audienceIds: [archived] },
    );
  }
}

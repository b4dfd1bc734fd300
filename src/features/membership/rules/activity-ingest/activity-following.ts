import type { FieldTypes } from "../../../../domain/field-types.ts";
import type { MemberRepo } from "../../member-repo.ts";
import type { MembershipChange } from "../../member-set.ts";
import type { MembershipRepo } from "../../membership-repo.ts";
import { type ActivityCondition, type ActivityTally, activityWindow } from "../activity-condition.ts";
import type { ActivityRuleRepo } from "../activity-rule-repo.ts";
import { audienceGraph, followersInOrder, inDependencyOrder } from "../audience-graph.ts";
import type { FieldTypeRepo } from "../field-type-repo.ts";
import { activityConditionsOf, conditionsOf, type Filter } from "../filter.ts";
import { matches } from "../filter-match.ts";
import type { RuleRepo } from "../rule-repo.ts";
import { type createSettle, FEW_MEMBERS, type Following, movements } from "../settle.ts";
import { countAtLeast, countsIn, partialMatch, type StoredActivity, type Window } from "./activity-batch.ts";

const NO_ACTIVITY: ActivityTally = { count: 0, lastAt: null };
const NO_TYPES: FieldTypes = new Map();
/** What a rule that reads only activities is given for a member's data (it reads none of it). */
const NO_DATA = { folded: { id: "", email: null, emails: [], fields: {} }, createdAt: new Date(0) };

/** What following activities reads and writes (rule-following.ts's deps). */
export interface ActivityFollowingDeps {
  rules: Pick<RuleRepo, "matchesAmongMany">;
  sets: Pick<MembershipRepo, "applyMatches">;
  members: Pick<MemberRepo, "foldedBySeq">;
  fieldTypes: Pick<FieldTypeRepo, "types">;
  activities: Pick<ActivityRuleRepo, "tallies">;
  /** ACTIVITY_RETENTION_DAYS: what activity conditions count no further back than. */
  activityRetentionDays?: number | undefined;
  clock: () => number;
}

/** An audience to evaluate again for some members (`among`), with what the batch already decides. */
interface Asked {
  audienceId: string;
  filter: Filter;
  among: number[];
  /** The members whose answer the batch decides without their other activities (activity-batch.ts). */
  decided: Map<number, boolean>;
}

/**
 * Which members of a batch each activity audience must evaluate again, and which answers the batch
 * decides by itself. A member none of whose new activities the rule's conditions count has the
 * counts it had: the rule's answer cannot have changed (time moves counts only across windows'
 * edges, which the clock follows), so it is not evaluated. Of the others, a rule whose answer
 * follows from what the batch's activities alone count (`count gte 1` of one counted now) is
 * decided here, without reading the member's other activities.
 */
export function batchPlan(
  audiences: { id: string; filter: Filter }[],
  stored: StoredActivity[],
  now: number,
  retentionDays: number | undefined,
): Map<string, { among: number[]; decided: Map<number, boolean> }> {
  const bySeq = new Map<number, StoredActivity[]>();
  for (const activity of stored) {
    const own = bySeq.get(activity.seq);
    if (own) own.push(activity);
    else bySeq.set(activity.seq, [activity]);
  }
  // The members with an activity of each type, in bySeq's order: an audience looks only at the
  // members of its types (20 audiences over every member of a batch was most of the plan).
  const byType = new Map<string, number[]>();
  for (const [seq, activities] of bySeq) {
    for (const { type } of activities) {
      const seqs = byType.get(type);
      if (!seqs) byType.set(type, [seq]);
      else if (seqs.at(-1) !== seq) seqs.push(seq);
    }
  }
  const plan = new Map<string, { among: number[]; decided: Map<number, boolean> }>();
  for (const { id, filter } of audiences) {
    const conditions = activityConditionsOf(filter);
    const windows = conditions.map((c) => activityWindow(c, now, retentionDays));
    const types = [...new Set(conditions.map((c) => c.activity))];
    const candidates =
      types.length === 1
        ? (byType.get(types[0] as string) ?? [])
        : [...bySeq].flatMap(([seq, activities]) => (activities.some((a) => types.includes(a.type)) ? [seq] : []));
    // Field and audience conditions are not known here: only rules of activities alone are decided.
    const decidable = conditionsOf(filter).length === 0;
    const among: number[] = [];
    const decided = new Map<number, boolean>();
    // How many of a member's new activities each condition surely counts (by the condition's place).
    const least = conditions.map(() => 0);
    const known = (condition: ActivityCondition) => countAtLeast(condition, least[conditions.indexOf(condition)] ?? 0);
    for (const seq of candidates) {
      const activities = bySeq.get(seq) as StoredActivity[];
      // Whether any condition may count one of them.
      let touched = false;
      for (let c = 0; c < conditions.length; c++) {
        const condition = conditions[c] as ActivityCondition;
        let n = 0;
        for (const activity of activities) {
          const counted = countsIn(condition, windows[c] as Window, activity);
          if (counted !== false) touched = true;
          if (counted === true) n += 1;
        }
        least[c] = n;
      }
      if (!touched) continue;
      among.push(seq);
      // A rule of one activity condition (most) is its count's answer; others are folded over.
      const answer = !decidable
        ? undefined
        : conditions[0] === filter
          ? known(conditions[0])
          : partialMatch(filter, known);
      if (answer !== undefined) decided.set(seq, answer);
    }
    if (among.length > 0) plan.set(id, { among, decided });
  }
  return plan;
}

/**
 * The activity part of rule following (rule-following.ts): after activities were stored, the
 * audiences whose rules count them follow for those members.
 */
export function createActivityFollowing(deps: ActivityFollowingDeps, settle: ReturnType<typeof createSettle>) {
  /**
   * Which of `among` each rule naming no audience holds for, in process: the answers the batch
   * decided, and the others from the members' tallies, read in one pass over their activities for
   * the conditions of the rules still undecided only (and so only as far back as those reach).
   * Rules of activities only read neither members' data nor field types.
   */
  async function matchedInProcess(
    tx: Following["tx"],
    workspaceId: string,
    asked: Asked[],
    now: number,
  ): Promise<{ audienceId: string; among: number[]; seqs: number[] }[]> {
    const open = asked.map((a) => ({ ...a, open: a.among.filter((seq) => !a.decided.has(seq)) }));
    const reading = open.filter((a) => a.open.length > 0);
    const seqs = [...new Set(reading.flatMap((a) => a.open))];
    // Each distinct condition counted once (twenty audiences often share one).
    const slots = new Map<string, number>();
    // Each condition object's slot, so that a member's answer does not serialize its conditions again.
    const slotOf = new Map<ActivityCondition, number>();
    const conditions: ActivityCondition[] = [];
    for (const condition of reading.flatMap((a) => activityConditionsOf(a.filter))) {
      const key = JSON.stringify(condition);
      const slot = slots.get(key);
      if (slot !== undefined) {
        slotOf.set(condition, slot);
        continue;
      }
      slots.set(key, conditions.length);
      slotOf.set(condition, conditions.length);
      conditions.push(condition);
    }
    const activityOnly = reading.every((a) => conditionsOf(a.filter).length === 0);
    const types = activityOnly ? NO_TYPES : await deps.fieldTypes.types(tx, workspaceId);
    const folded = activityOnly ? [] : await deps.members.foldedBySeq(tx, workspaceId, seqs);
    const context = { now, activityRetentionDays: deps.activityRetentionDays };
    const tallies = await deps.activities.tallies(tx, workspaceId, seqs, conditions, context);
    const members = new Map(folded.map((m) => [m.seq, m]));
    const activityOf = (seq: number) => (condition: ActivityCondition) =>
      tallies.get(seq)?.[slotOf.get(condition) ?? (slots.get(JSON.stringify(condition)) as number)] ?? NO_ACTIVITY;
    const inAudience = () => false;
    // Each member's matching context made once, not once per audience.
    const contexts = new Map<number, Parameters<typeof matches>[3]>();
    const contextOf = (seq: number) => {
      let context = contexts.get(seq);
      if (!context) {
        context = { types, now, inAudience, activity: activityOf(seq) };
        contexts.set(seq, context);
      }
      return context;
    };
    return open.map(({ audienceId, filter, among, decided }) => ({
      audienceId,
      among,
      seqs: among.filter((seq) => {
        const answer = decided.get(seq);
        if (answer !== undefined) return answer;
        const m = members.get(seq) ?? (activityOnly ? NO_DATA : undefined);
        return m !== undefined && matches(filter, m.folded, m.createdAt, contextOf(seq));
      }),
    }));
  }

  /**
   * After activities were stored for members: the audiences whose rules count them are evaluated
   * again for the members whose new activities they count (batchPlan), with the audiences whose
   * rules name one of them, in dependency order; each change reported as `activity`, or
   * `dependency`.
   */
  return async function followActivities(
    w: Following,
    stored: StoredActivity[],
    last = false,
  ): Promise<MembershipChange[]> {
    if (stored.length === 0) return [];
    // The rules that count activities and those that name audiences, read together: the naming
    // rules were a round trip of their own (w.naming), and every ingest under activity audiences needs both.
    const read = await w.activityRules();
    const audiences = read.filter((rule) => rule.counts);
    if (audiences.length === 0) return [];
    const now = deps.clock();
    const plan = batchPlan(audiences, stored, now, deps.activityRetentionDays);
    if (plan.size === 0) return [];
    const own = new Map([...plan].map(([id, p]) => [id, p.among]));
    const { tx, workspaceId } = w;
    const rules = read.filter((rule) => rule.names);
    const graph = audienceGraph(rules);
    const order = inDependencyOrder(graph, new Set([...own.keys(), ...followersInOrder(graph, own.keys())]));
    const filters = new Map([...rules, ...audiences].map((rule) => [rule.id, rule.filter]));
    // The audiences whose rules name none are evaluated together and written in one statement: a
    // round trip each for twenty audiences cost more than the ingest's own statements.
    const together = order.filter((id) => own.has(id) && !graph.uses.has(id));
    const rest = order.filter((id) => !together.includes(id));
    // With nothing to settle after it, that statement takes their locks (and, when it is the
    // write's last, records the write): the evaluation reads nothing an audience's lock guards.
    const alone = rest.length === 0;
    if (!alone) await w.locks.following(order);
    const asked = together.map((id) => ({
      audienceId: id,
      filter: filters.get(id) as Filter,
      among: own.get(id) ?? [],
      decided: plan.get(id)?.decided ?? new Map<number, boolean>(),
    }));
    const seqs = new Set(asked.flatMap((a) => a.among.filter((seq) => !a.decided.has(seq))));
    // Up to FEW_MEMBERS (every ingest): in process, their activities tallied in one pass. Counted
    // by the database per member and per audience, 10,000 activities under 20 audiences took 4 s.
    const matched =
      seqs.size <= FEW_MEMBERS
        ? await matchedInProcess(tx, workspaceId, asked, now)
        : await deps.rules.matchesAmongMany(tx, workspaceId, asked, {
            types: await deps.fieldTypes.types(tx, workspaceId),
            now,
            workspaceId,
            activityRetentionDays: deps.activityRetentionDays,
          });
    const moved = new Map<string, number[] | "many">();
    const lock = alone ? w.locks.followingInStatement(together) : undefined;
    const closing =
      alone && last
        ? w.closing([...together].sort().map((audienceId) => ({ audienceId, reason: "activity" })))
        : undefined;
    const changes = w.report(
      "activity",
      await deps.sets.applyMatches(tx, workspaceId, "own", matched, { lock, closing }),
    );
    for (const change of changes) {
      if (graph.usedBy.has(change.audienceId)) {
        for (const [audienceId, who] of movements([change])) moved.set(audienceId, who);
      }
    }
    return [...changes, ...(await settle(w, { graph, order: rest, filters, moved, own, ownReason: "activity", now }))];
  };
}

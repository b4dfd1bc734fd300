import type { FoldedMemberRow, MemberRepo } from "../member-repo.ts";
import type { MembershipChange } from "../member-set.ts";
import type { MembershipRepo } from "../membership-repo.ts";
import { type ActivityCondition, type ActivityTally, DAY_MS, slidingEdges } from "./activity-condition.ts";
import type { StoredActivity } from "./activity-ingest/activity-batch.ts";
import { createActivityFollowing } from "./activity-ingest/activity-following.ts";
import type { ActivityRuleRepo } from "./activity-rule-repo.ts";
import { audienceGraph, followersInOrder, inDependencyOrder } from "./audience-graph.ts";
import type { FieldTypeRepo } from "./field-type-repo.ts";
import { activityConditionsOf, type Filter, timeConditionsOf } from "./filter.ts";
import { matches, windowStart } from "./filter-match.ts";
import type { RuleRepo } from "./rule-repo.ts";
import { createSettle, evaluateMembers, FEW_MEMBERS, type FollowAlong, type Following, movements } from "./settle.ts";

export interface RuleFollowingDeps {
  rules: Pick<RuleRepo, "ruleMatches" | "matchesAmong" | "matchesAmongMany" | "timeRules" | "inRanges" | "evaluated">;
  sets: Pick<MembershipRepo, "applyMatches" | "recompute">;
  members: Pick<MemberRepo, "folded" | "foldedBySeq">;
  fieldTypes: Pick<FieldTypeRepo, "types">;
  activities: Pick<ActivityRuleRepo, "tallies" | "crossings">;
  /** ACTIVITY_RETENTION_DAYS: what activity conditions count no further back than. */
  activityRetentionDays?: number | undefined;
  clock: () => number;
}

const NO_ACTIVITY: ActivityTally = { count: 0, lastAt: null };

export type { FollowAlong, Following } from "./settle.ts";

/**
 * How rule-based audiences follow what changes under them: members' data (their rules are
 * evaluated in process for those members), and other audiences' members (audience conditions:
 * the audiences whose rules name a changed audience are evaluated again for the members that moved
 * in it, in dependency order, in the same transaction).
 */
export function createRuleFollowing(deps: RuleFollowingDeps) {
  const settle = createSettle(deps);

  const followActivities = createActivityFollowing(deps, settle);

  const following = {
    /**
     * After members were created or changed: every rule-based audience follows. Rules are
     * evaluated in dependency order, each audience condition reading the named audience's
     * members as this write leaves them, and every audience that moves is written in one
     * statement. A change is reported as `dependency` when an audience the rule names moved.
     */
    async followMembers(
      w: Following,
      memberIds: string[],
      known: FoldedMemberRow[],
      along: FollowAlong = {},
    ): Promise<MembershipChange[]> {
      const { tx, workspaceId } = w;
      const knownIds = new Set(known.map((m) => m.id));
      const unknown = memberIds.filter((id) => !knownIds.has(id));
      // One read for the evaluation: the rules, their matches, the field types and these members.
      const read = along.read ?? (await deps.rules.ruleMatches(tx, workspaceId, memberIds, { foldedOf: unknown }));
      const { types, rules, held } = read;
      // The writes that ride in the statement moving the audiences, alone when none moves.
      const alone = async () => {
        if (along.writes) {
          const closing = along.last ? w.closing([]) : undefined;
          await deps.sets.applyMatches(tx, workspaceId, [], [], { writes: along.writes, closing });
        }
        return [];
      };
      if (rules.length === 0) return alone();
      const readIds = new Set(read.folded.map((m) => m.id));
      const missing = along.read ? unknown.filter((id) => !readIds.has(id)) : [];
      const members = [
        ...known,
        ...read.folded.filter((m) => !knownIds.has(m.id)),
        ...(missing.length > 0 ? await deps.members.folded(tx, workspaceId, missing) : []),
      ];
      const changed = members.map((m) => m.seq);
      const graph = audienceGraph(rules);
      const now = deps.clock();
      // What the rules' activity conditions count of these members, read by the database at once.
      const conditions = rules.flatMap((rule) => activityConditionsOf(rule.filter));
      const slots = new Map(conditions.map((condition, i) => [condition, i]));
      const tallies = await deps.activities.tallies(tx, workspaceId, changed, conditions, {
        now,
        activityRetentionDays: deps.activityRetentionDays,
      });
      const activityOf = (seq: number) => (condition: ActivityCondition) =>
        tallies.get(seq)?.[slots.get(condition) as number] ?? NO_ACTIVITY;
      const { moving, moved } = evaluateMembers({ graph, rules, held, members, types, now, activityOf });
      if (moving.length === 0) return alone();
      // The moving audiences' lock, and the writes riding along, in the statement that moves them.
      const lock = w.locks.followingInStatement(moving.map((m) => m.audienceId));
      const byDependency = (c: { audienceId: string }) =>
        (graph.uses.get(c.audienceId) ?? []).some((named) => moved.has(named));
      // As the changes are reported below: by reason, then in id order (changesOf's).
      const byId = (a: { audienceId: string }, b: { audienceId: string }) =>
        a.audienceId < b.audienceId ? -1 : a.audienceId > b.audienceId ? 1 : 0;
      const reasons = [...moving].sort(byId).map(({ audienceId }) => ({
        audienceId,
        reason: byDependency({ audienceId }) ? ("dependency" as const) : ("member_changed" as const),
      }));
      const closing = along.last
        ? w.closing([
            ...reasons.filter((m) => m.reason === "member_changed"),
            ...reasons.filter((m) => m.reason === "dependency"),
          ])
        : undefined;
      const changes = await deps.sets.applyMatches(tx, workspaceId, changed, moving, {
        lock,
        writes: along.writes,
        closing,
      });
      return [
        ...w.report(
          "member_changed",
          changes.filter((c) => !byDependency(c)),
        ),
        ...w.report("dependency", changes.filter(byDependency)),
      ];
    },

    /**
     * After audiences' members changed (by hand, by their rule): every audience whose rule names
     * one of them, directly or through others, follows, in dependency order, each reported as
     * `dependency`.
     */
    async followAudiences(w: Following, changes: MembershipChange[]): Promise<MembershipChange[]> {
      const moved = movements(changes);
      if (moved.size === 0) return [];
      const rules = await w.naming();
      const graph = audienceGraph(rules);
      const order = followersInOrder(graph, moved.keys());
      if (order.length === 0) return [];
      const filters = new Map(rules.map((rule) => [rule.id, rule.filter]));
      return settle(w, { graph, order, filters, moved, own: new Map(), ownReason: "dependency", now: deps.clock() });
    },

    /**
     * After activities were stored for members (each one's number and type, and when the caller
     * has them its occurredAt and properties): the audiences whose rules count them follow
     * (activity-following.ts).
     */
    followActivities: (w: Following, stored: StoredActivity[], last?: boolean): Promise<MembershipChange[]> =>
      followActivities(w, stored, last),

    /**
     * Relative-time rules catch up with the clock. A `withinLast` window [now − d, now] moved from
     * [t0 − d, t0] to [t1 − d, t1]: only members whose value lies in [t0 − d, t1 − d] (leaving it)
     * or in [t0, t1] (entering it) can have changed their minds, and only those are read (an index
     * range each) and evaluated again, with the audiences whose rules name one of them, all in
     * dependency order; each audience is then up to date at t1. Reported as `time`, or
     * `dependency` where an audience the rule names moved.
     */
    async followClock(w: Following): Promise<MembershipChange[]> {
      const { tx, workspaceId } = w;
      const audiences = await deps.rules.timeRules(tx, workspaceId);
      if (audiences.length === 0) return [];
      const now = deps.clock();
      const ranges = audiences.flatMap(({ id, filter, evaluatedAt }) => {
        const before = evaluatedAt.getTime();
        // A clock behind the one that last evaluated the audience waits for it.
        if (now <= before) return [];
        return timeConditionsOf(filter).flatMap(({ field, duration }) => {
          const key = field === "createdAt" ? "" : field.slice("fields.".length);
          const from = windowStart(duration, before);
          const to = windowStart(duration, now);
          return [
            { audienceId: id, key, from: new Date(from), to: new Date(to) },
            { audienceId: id, key, from: new Date(before), to: new Date(now) },
          ];
        });
      });
      const own = await deps.rules.inRanges(tx, workspaceId, ranges);
      // Activity conditions: the members with an activity that crossed a window's edge, or the
      // retention's, since the audience's last tick (activity-condition.ts slidingEdges).
      const counting = new Set<string>();
      const spans = audiences.flatMap(({ id, filter, evaluatedAt }) => {
        const before = evaluatedAt.getTime();
        const conditions = activityConditionsOf(filter);
        if (conditions.length > 0) counting.add(id);
        if (now <= before) return [];
        const retention = deps.activityRetentionDays;
        return conditions.flatMap((condition) => {
          const edges = slidingEdges(condition).map((d) => [windowStart(d, before), windowStart(d, now)]);
          if (retention !== undefined) edges.push([before - retention * DAY_MS, now - retention * DAY_MS]);
          return edges.map(([from, to]) => ({
            audienceId: id,
            type: condition.activity,
            from: new Date(from as number),
            to: new Date(to as number),
          }));
        });
      });
      for (const [id, seqs] of await deps.activities.crossings(tx, workspaceId, spans)) {
        own.set(id, [...new Set([...(own.get(id) ?? []), ...seqs])]);
      }
      let changes: MembershipChange[] = [];
      if (own.size > 0) {
        const rules = await w.naming();
        const graph = audienceGraph(rules);
        const order = inDependencyOrder(graph, new Set([...own.keys(), ...followersInOrder(graph, own.keys())]));
        const filters = new Map([...rules, ...audiences].map((rule) => [rule.id, rule.filter]));
        await w.locks.following(order);
        const types = await deps.fieldTypes.types(tx, workspaceId);
        const moved = new Map<string, number[] | "many">();
        // The audiences of the tick whose rules name no other audience depend on none: evaluated
        // together, in process, and written in one statement (one per audience cost ten times the
        // round trips and rewrote the same chunks of `changed` for each).
        // Each is evaluated for its own members only, those near its window's edges.
        // (Rules that count activities are left to the database, which counts them.)
        const alone = order.filter((id) => own.has(id) && !graph.uses.has(id) && !counting.has(id));
        const seqs = [...new Set(alone.flatMap((id) => own.get(id) ?? []))];
        const together = alone.length > 1 && seqs.length <= FEW_MEMBERS ? alone : [];
        if (together.length > 0) {
          const members = new Map(
            (await deps.members.foldedBySeq(tx, workspaceId, seqs)).map((member) => [member.seq, member]),
          );
          const context = { types, now, inAudience: () => false };
          const matched = together.map((id) => {
            const among = own.get(id) ?? [];
            const filter = filters.get(id) as Filter;
            return {
              audienceId: id,
              among,
              seqs: among.filter((seq) => {
                const member = members.get(seq);
                return member !== undefined && matches(filter, member.folded, member.createdAt, context);
              }),
            };
          });
          for (const change of w.report("time", await deps.sets.applyMatches(tx, workspaceId, "own", matched))) {
            // Who moved matters only where another rule names the audience (and costs a pass over its chunks).
            if (graph.usedBy.has(change.audienceId)) {
              for (const [audienceId, who] of movements([change])) moved.set(audienceId, who);
            }
            changes.push(change);
          }
        }
        const rest = order.filter((id) => !together.includes(id));
        changes = [
          ...changes,
          ...(await settle(w, { graph, order: rest, filters, moved, own, ownReason: "time", now, types })),
        ];
      }
      const current = audiences.filter((a) => a.evaluatedAt.getTime() < now).map((a) => a.id);
      if (current.length > 0) await deps.rules.evaluated(tx, workspaceId, current, new Date(now));
      return changes;
    },
  };

  return following;
}

export type RuleFollowing = ReturnType<typeof createRuleFollowing>;

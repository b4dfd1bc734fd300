import type { Prisma } from "../../../../generated/prisma/client.ts";
import type { FieldTypes } from "../../../domain/field-types.ts";
import type { SqlClient } from "../../../platform/db/sql-client.ts";
import type { FoldedMemberRow } from "../member-repo.ts";
import { type ChangeReason, isMember, type MembershipChange, membersOf, sizeOf } from "../member-set.ts";
import type { MembershipRepo, SetChange } from "../membership-repo.ts";
import type { WriteClosing } from "../membership-sql.ts";
import type { WriteLocks } from "../write-locks.ts";
import type { ActivityCondition, ActivityTally } from "./activity-condition.ts";
import type { FollowingRule } from "./activity-rule-repo.ts";
import { type AudienceGraph, inDependencyOrder } from "./audience-graph.ts";
import type { FieldTypeRepo } from "./field-type-repo.ts";
import type { Filter } from "./filter.ts";
import { matches } from "./filter-match.ts";
import type { HeldBy, RuleMatches, RuleRead, RuleRepo } from "./rule-repo.ts";

/**
 * Past this many members moved in the audiences a rule names, the rule is evaluated over the
 * whole workspace rather than member by member.
 */
export const FEW_MEMBERS = 10_000;

/** Who moved in each changed audience: their numbers, or "many" past FEW_MEMBERS. */
export function movements(changes: SetChange[]): Map<string, number[] | "many"> {
  const moved = new Map<string, number[] | "many">();
  for (const change of changes) {
    const size = sizeOf(change.entered) + sizeOf(change.left);
    if (size === 0) continue;
    moved.set(
      change.audienceId,
      size > FEW_MEMBERS ? "many" : [...membersOf(change.entered), ...membersOf(change.left)],
    );
  }
  return moved;
}

/** Reports a write's membership changes with their reason (membership-writer.ts). */
export type Report = (reason: ChangeReason, changes: SetChange[]) => MembershipChange[];

/** One write's view: its transaction, workspace, locks, and where its changes are reported. */
export interface Following {
  tx: SqlClient;
  workspaceId: string;
  locks: WriteLocks;
  report: Report;
  /** The audiences whose rules name others, as this write leaves them (read once per write). */
  naming: () => Promise<{ id: string; filter: Filter }[]>;
  /** The rules that follow activities (activityRuleRepo.activityRules, read once per write). */
  activityRules: () => Promise<FollowingRule[]>;
  /**
   * The write's closing parts, for a statement that is its last and may move these audiences,
   * each reported under its reason, in this order (membership-writer.ts); undefined when the
   * write must close with a statement of its own.
   */
  closing: (moving: { audienceId: string; reason: ChangeReason }[]) => WriteClosing | undefined;
}

/**
 * What a member write hands followMembers to save round trips: `read`, what it already read for
 * the evaluation in one statement (ruleRepo.ruleMatches, under the member lock, with no chunk
 * written since); `writes`, its own data-modifying WITH items (the member's new data), which ride
 * in the statement that moves the audiences.
 */
export interface FollowAlong {
  read?: RuleRead | undefined;
  writes?: Prisma.Sql | undefined;
  /** Nothing follows in the write: its events, record and size history ride in this statement. */
  last?: boolean | undefined;
}

export interface SettleDeps {
  rules: Pick<RuleRepo, "matchesAmong">;
  sets: Pick<MembershipRepo, "applyMatches" | "recompute">;
  fieldTypes: Pick<FieldTypeRepo, "types">;
  /** ACTIVITY_RETENTION_DAYS: what activity conditions count no further back than. */
  activityRetentionDays?: number | undefined;
}

/**
 * Evaluates the audiences of `order` again, in that order, for their `own` members (those the
 * caller knows may have changed) and the members that moved in the audiences their rules name
 * (`moved`, which grows as they change): member by member, or past FEW_MEMBERS over the
 * workspace. A change is reported as `dependency` when a named audience moved, else `ownReason`.
 */
export function createSettle(deps: SettleDeps) {
  return async function settle(
    w: Following,
    plan: {
      graph: AudienceGraph;
      order: string[];
      filters: Map<string, Filter>;
      moved: Map<string, number[] | "many">;
      own: Map<string, number[]>;
      ownReason: ChangeReason;
      now: number;
      /** The workspace's field types, when the caller read them. */
      types?: FieldTypes;
    },
  ): Promise<MembershipChange[]> {
    const { tx, workspaceId } = w;
    const { graph, order, filters, moved, own } = plan;
    // Nothing to settle (an ingest whose audiences were all evaluated together): no statement.
    if (order.length === 0) return [];
    await w.locks.following(order);
    const types = plan.types ?? (await deps.fieldTypes.types(tx, workspaceId));
    const context = { types, now: plan.now, workspaceId, activityRetentionDays: deps.activityRetentionDays };
    const settled: MembershipChange[] = [];
    for (const id of order) {
      const named = (graph.uses.get(id) ?? []).flatMap((n) => {
        const members = moved.get(n);
        return members === undefined ? [] : [members];
      });
      const mine = own.get(id) ?? [];
      if (named.length === 0 && mine.length === 0) continue;
      const filter = filters.get(id) as Filter;
      const seqs = [...new Set([...mine, ...named.flatMap((members) => (members === "many" ? [] : members))])];
      const setChanges =
        named.includes("many") || seqs.length > FEW_MEMBERS
          ? await deps.sets.recompute(tx, workspaceId, id, filter, context)
          : await deps.sets.applyMatches(tx, workspaceId, seqs, [
              { audienceId: id, seqs: await deps.rules.matchesAmong(tx, workspaceId, filter, context, seqs) },
            ]);
      const reason = named.length > 0 ? "dependency" : plan.ownReason;
      for (const change of w.report(reason, setChanges)) {
        if (graph.usedBy.has(change.audienceId)) {
          for (const [audienceId, members] of movements([change])) moved.set(audienceId, members);
        }
        settled.push(change);
      }
    }
    return settled;
  };
}

/**
 * Every rule evaluated in process for members whose data changed (followMembers), in dependency
 * order, an audience condition reading the named audience's members as this write leaves them.
 * `moving`: the audiences whose matches among these members differ from their match sets' (the
 * rows for applyMatches); `moved`: the audiences named by rules whose members moved.
 */
export function evaluateMembers(input: {
  graph: AudienceGraph;
  rules: RuleMatches[];
  /** What the audiences that rules name hold of these members, before this write. */
  held: Map<string, HeldBy>;
  members: FoldedMemberRow[];
  types: FieldTypes;
  now: number;
  activityOf: (seq: number) => (condition: ActivityCondition) => ActivityTally;
}): { moving: { audienceId: string; seqs: number[] }[]; moved: Set<string> } {
  const { graph, rules, held, members, types, now, activityOf } = input;
  const changed = members.map((m) => m.seq);
  const byId = new Map(rules.map((rule) => [rule.id, rule]));
  // The members of each named audience among these, as the write leaves them so far.
  const inside = new Map([...held].map(([id, sets]) => [id, new Set(sets.member)]));
  const moved = new Set<string>();
  const moving: { audienceId: string; seqs: number[] }[] = [];
  for (const id of inDependencyOrder(graph, new Set(byId.keys()))) {
    const { filter, matched } = byId.get(id) as RuleMatches;
    const seqs = members
      .filter((m) => {
        const inAudience = (named: string) => inside.get(named)?.has(m.seq) ?? false;
        return matches(filter, m.folded, m.createdAt, { types, now, inAudience, activity: activityOf(m.seq) });
      })
      .map((m) => m.seq);
    const was = new Set(matched);
    if (was.size !== seqs.length || seqs.some((seq) => !was.has(seq))) moving.push({ audienceId: id, seqs });
    if (!graph.usedBy.has(id)) continue;
    // Who is a member after this write, as applyMatches will write it.
    const sets = held.get(id);
    const include = new Set(sets?.include);
    const exclude = new Set(sets?.exclude);
    const matching = new Set(seqs);
    const after = new Set(changed.filter((s) => isMember(include.has(s), matching.has(s), exclude.has(s))));
    const before = inside.get(id) ?? new Set();
    if (changed.some((s) => after.has(s) !== before.has(s))) moved.add(id);
    inside.set(id, after);
  }
  return { moving, moved };
}

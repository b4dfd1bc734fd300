import type { FieldTypes } from "../../../domain/field-types.ts";
import type { SqlClient } from "../../../platform/db/sql-client.ts";
import { type ChangeReason, type MembershipChange, membersOf, sizeOf } from "../member-set.ts";
import type { MembershipRepo, SetChange } from "../membership-repo.ts";
import type { WriteLocks } from "../write-locks.ts";
import type { AudienceGraph } from "./audience-graph.ts";
import type { FieldTypeRepo } from "./field-type-repo.ts";
import type { Filter } from "./filter.ts";
import type { RuleRepo } from "./rule-repo.ts";

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

/** Reports a write's membership changes with their reason (membership-service.ts). */
export type Report = (reason: ChangeReason, changes: SetChange[]) => MembershipChange[];

/** One write's view: its transaction, workspace, locks, and where its changes are reported. */
export interface Following {
  tx: SqlClient;
  workspaceId: string;
  locks: WriteLocks;
  report: Report;
  /** The audiences whose rules name others, as this write leaves them (read once per write). */
  naming: () => Promise<{ id: string; filter: Filter }[]>;
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

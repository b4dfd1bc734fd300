import type { Store } from "../../platform/db/database.ts";
import { withCommit } from "../../platform/db/sql-client.ts";
import type { AudienceRepo } from "./audience-repo.ts";
import type { MemberRepo } from "./member-repo.ts";
import type { MembershipRepo } from "./membership-repo.ts";
import { createMembershipWriter, type WriteTransaction } from "./membership-writer.ts";
import type { MembershipWriter, WriteOptions } from "./membership-writer-types.ts";
import { netChanges, sizeChangesOf } from "./net-changes.ts";
import type { OutboxEntry } from "./outbox-entries.ts";
import type { ActivityRuleRepo } from "./rules/activity-rule-repo.ts";
import type { FieldTypeRepo } from "./rules/field-type-repo.ts";
import { createRuleFollowing } from "./rules/rule-following.ts";
import type { RuleRepo } from "./rules/rule-repo.ts";
import type { WriteRecords } from "./transition-repo.ts";
import type { MemberCandidateRepo } from "./upsert/member-candidates-repo.ts";
import { createWriteLocks, type LockRows } from "./write-locks.ts";

export type { MembershipWriter, NamingRule, WriteOptions } from "./membership-writer-types.ts";
export type { SizeChange } from "./net-changes.ts";

/**
 * Told after a write that recorded events has committed, so that they can be published at once
 * (the event workers, src/composition.ts). The events themselves are recorded by `records`.
 */
export interface CommitListener {
  committed(workspaceId: string): void;
}

export interface MembershipDeps {
  store: Pick<Store, "transaction" | "db">;
  locks: LockRows;
  sets: Pick<
    MembershipRepo,
    "include" | "exclude" | "recompute" | "copyUnion" | "applyMatches" | "forget" | "copyMembers"
  >;
  rules: Pick<
    RuleRepo,
    "ruleMatches" | "matchesAmong" | "matchesAmongMany" | "namingAudiences" | "timeRules" | "inRanges" | "evaluated"
  >;
  members: Pick<MemberRepo, "folded" | "foldedBySeq">;
  candidates: MemberCandidateRepo;
  audiences: Pick<AudienceRepo, "setFilter" | "listRuleOutdated" | "inheritClock">;
  fieldTypes: Pick<FieldTypeRepo, "types">;
  activities: Pick<ActivityRuleRepo, "tallies" | "crossings" | "activityRules">;
  /** ACTIVITY_RETENTION_DAYS: activity conditions count no activity older (none when absent: tests). */
  activityRetentionDays?: number | undefined;
  /** The time rules are evaluated at (relative-time conditions); a fixed clock in tests. */
  clock?: () => number;
  events: CommitListener;
  /** The write's events, membership record and size history (transition-repo.ts writeRecords). */
  records: WriteRecords;
}

export function createMembershipService(deps: MembershipDeps) {
  const { events } = deps;
  const clock = deps.clock ?? Date.now;
  const writerDeps = { ...deps, clock, following: createRuleFollowing({ ...deps, clock }) };

  /**
   * Runs fn as one write transaction of the workspace, whether or not it changes membership (an
   * audience renamed, a field typed): the one place the workspace's locks are taken, in order.
   * With `memberWrites`, the workspace's member lock is taken first: for writes that create,
   * change or delete members, set a rule or merge. With `lockWithFirstRead` too, it is taken by
   * fn's first statement, which must be `readMembers`, `writable`, `readCandidates`,
   * `readFieldTypes` or `readActivityRules` (anything else before it throws LockOrderError): the
   * lock and what the write reads first in one round trip. A write whose last statement is
   * followMembers' with `last` has its events, record and size history ride there: one round trip
   * less.
   */
  async function workspaceWrite<T>(
    workspaceId: string,
    options: WriteOptions,
    fn: (w: MembershipWriter) => Promise<T>,
  ): Promise<T> {
    const result = await deps.store.transaction(async (tx) => {
      const locks = createWriteLocks(deps.locks, tx, workspaceId);
      const lockFirst = options.memberWrites && options.lockWithFirstRead === true;
      if (options.memberWrites && !lockFirst) await locks.members();
      const recorded: OutboxEntry[] = [];
      const closed: WriteTransaction["closed"] = {};
      const write = { tx, workspaceId, locks, recorded, lockFirst, closed };
      const value = await fn(createMembershipWriter(writerDeps, write));
      if (closed.entries !== undefined) {
        // Its last statement recorded them: nothing may have come after.
        if (recorded.length !== closed.entries) throw new Error("a write recorded events after its closing statement");
        return value;
      }
      // What the commit changes, not each step on the way: a member moved in and out again by one
      // write never held that membership at any commit.
      const entries = netChanges(recorded);
      // The write's events, and the membership record and size history (as exact as
      // member_count), once per write, at one instant: one statement in all, since a round trip
      // each cost more than their rows.
      // It is the write's last statement and nobody reads its answer: on PostgreSQL it goes with
      // the COMMIT, in one round trip (withCommit).
      if (entries.length > 0) await deps.records.record(withCommit(tx), workspaceId, entries, sizeChangesOf(entries));
      return value;
    });
    events.committed(workspaceId);
    return result;
  }

  return {
    workspaceWrite,

    /** Brings a workspace's relative-time rules up to date with the clock (clock-worker.ts). */
    followClock: (workspaceId: string) => workspaceWrite(workspaceId, { memberWrites: true }, (w) => w.followClock()),

    /**
     * Computes the rule matches that an upgrade could not (it marks such audiences rule_outdated):
     * run at start, before the service answers. Each audience in a transaction of its own; a
     * process that finds one already done by another skips it.
     */
    async refreshOutdatedRules(): Promise<number> {
      let refreshed = 0;
      for (const { workspaceId, id } of await deps.audiences.listRuleOutdated(deps.store.db)) {
        refreshed += await workspaceWrite(workspaceId, { memberWrites: true }, async (w) => {
          const audience = await w.locks.ruleOutdated(id);
          if (!audience) return 0;
          await w.setRule(id, audience.filter);
          return 1;
        });
      }
      return refreshed;
    },
  };
}

export type MembershipService = ReturnType<typeof createMembershipService>;

import type { Store } from "../../platform/db/database.ts";
import { type SqlClient, withCommit } from "../../platform/db/sql-client.ts";
import type { AudienceRepo } from "./audience-repo.ts";
import type { MemberRepo } from "./member-repo.ts";
import type { ChangeReason, MembershipChange } from "./member-set.ts";
import { EMPTY_SET } from "./member-set.ts";
import type { MembershipRepo, SetChange } from "./membership-repo.ts";
import { netChanges, sizeChangesOf } from "./net-changes.ts";
import { candidatesJson, candidatesOf, type MemberCandidateRepo } from "./upsert/member-candidates-repo.ts";

export type { SizeChange } from "./net-changes.ts";

import type { OutboxEntry } from "./outbox-entries.ts";
import { type ActivityRuleRepo, activityRulesJson, type FollowingRule } from "./rules/activity-rule-repo.ts";
import { declaredTypesJson, type FieldTypeRepo, typesOf } from "./rules/field-type-repo.ts";
import { audiencesOf, followsClock } from "./rules/filter.ts";
import { createRuleFollowing } from "./rules/rule-following.ts";
import { namingAudiencesJson, namingOf, type RuleRepo, ruleMatchesJson, ruleReadOf } from "./rules/rule-repo.ts";
import type { WriteRecords } from "./transition-repo.ts";
import { createWriteLocks, LockOrderError, type LockRows, type WriteLocks } from "./write-locks.ts";

export type { MembershipWriter, NamingRule, WriteOptions } from "./membership-writer-types.ts";

import type { MembershipWriter, NamingRule, WriteOptions } from "./membership-writer-types.ts";

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
  const { sets, events } = deps;
  const clock = deps.clock ?? Date.now;
  const following = createRuleFollowing({ ...deps, clock });

  /**
   * Every change of an audience's members passes through here, in the transaction that made it:
   * which members entered and which left each audience, and why. They become the write's
   * audience.members_changed events (recorded before it commits); this is the place to make
   * something else happen when membership changes.
   */
  function membershipChanged(
    recorded: OutboxEntry[],
    reason: ChangeReason,
    setChanges: SetChange[],
  ): MembershipChange[] {
    const changes = setChanges.map((change) => ({ ...change, reason }));
    for (const change of changes) recorded.push({ type: "audience.members_changed", ...change });
    return changes;
  }

  /**
   * `recorded` collects the write's events, in order; `workspaceWrite` records them before it
   * commits. `lockFirst`: the member lock is still to be taken, by the write's first read.
   */
  function writer(
    tx: SqlClient,
    workspaceId: string,
    locks: WriteLocks,
    recorded: OutboxEntry[],
    lockFirst: boolean,
  ): MembershipWriter {
    /** Whether the member lock is still to be taken by the read being made. */
    const lockingRead = () => lockFirst && !locks.holdsMembers();
    const requireAudience = (audienceId: string, mode: "update" | "share", what: string) => {
      if (!locks.holds(audienceId, mode)) throw new LockOrderError(`${what} needs audience ${audienceId} locked`);
    };
    const requireMembers = (what: string) => {
      if (!locks.holdsMembers()) throw new LockOrderError(`${what} needs the workspace's member lock`);
    };
    /** The change of one audience, or an empty one when it did not change. */
    const one = (audienceId: string, reason: ChangeReason, changes: MembershipChange[]): MembershipChange =>
      // Stryker disable next-line ConditionalExpression: equivalent, the repositories report only the audience they were given
      changes.find((c) => c.audienceId === audienceId) ?? { audienceId, reason, entered: EMPTY_SET, left: EMPTY_SET };
    const report = (reason: ChangeReason, setChanges: SetChange[]) => membershipChanged(recorded, reason, setChanges);
    let naming: Promise<NamingRule[]> | undefined;
    const namingAudiences = () => {
      naming ??= deps.rules.namingAudiences(tx, workspaceId);
      return naming;
    };
    let followingRules: Promise<FollowingRule[]> | undefined;
    const activityRules = () => {
      followingRules ??= deps.activities.activityRules(tx, workspaceId);
      return followingRules;
    };
    const w = { tx, workspaceId, locks, report, naming: namingAudiences, activityRules };

    return {
      get tx() {
        if (lockingRead())
          throw new LockOrderError("the member lock goes with the write's first read, before any statement");
        return tx;
      },
      workspaceId,
      locks,
      publish(...entries) {
        recorded.push(...entries);
      },
      async writable(audienceId) {
        const memberLock = lockingRead();
        if (!memberLock) requireMembers("locking an audience with the rules that follow it");
        const { row, read } = await locks.writableReading(audienceId, namingAudiencesJson(workspaceId), { memberLock });
        if (read !== undefined && !naming) naming = Promise.resolve(namingOf(read));
        return row;
      },
      async include(audienceId, seqs) {
        // Stryker disable next-line StringLiteral: equivalent, a lock is held for update or share, so any mode but "share" means update
        requireAudience(audienceId, "update", "adding members");
        // The member lock: the audiences whose rules name this one follow it, locked as they do.
        requireMembers("adding members");
        const changes = report("manual", await sets.include(tx, workspaceId, audienceId, seqs));
        await following.followAudiences(w, changes);
        return one(audienceId, "manual", changes);
      },
      async exclude(audienceId, memberIds) {
        // Stryker disable next-line StringLiteral: equivalent, as in include
        requireAudience(audienceId, "update", "removing members");
        requireMembers("removing members");
        const changes = report("manual", await sets.exclude(tx, workspaceId, audienceId, memberIds));
        await following.followAudiences(w, changes);
        return one(audienceId, "manual", changes);
      },
      readCandidates: (ids, emailKeys) =>
        locks.readUnderMembers(lockFirst, "reading an upsert's candidates", {
          alongside: () => candidatesJson(workspaceId, ids, emailKeys),
          parse: candidatesOf,
          read: () => deps.candidates.candidates(tx, workspaceId, ids, emailKeys),
        }),
      readFieldTypes: () =>
        locks.readUnderMembers(lockFirst, "reading the field types", {
          alongside: () => declaredTypesJson(workspaceId),
          parse: (json) => typesOf(JSON.parse(json)),
          read: () => deps.fieldTypes.types(tx, workspaceId),
        }),
      namingAudiences,
      async setRule(audienceId, filter, types) {
        // The member lock first: a member created meanwhile is either seen by the evaluation or
        // evaluated against the new rule by its own request afterwards.
        requireMembers("setting a rule");
        // Stryker disable next-line StringLiteral: equivalent, as in include
        requireAudience(audienceId, "update", "setting a rule");
        const context = {
          types: types ?? (await deps.fieldTypes.types(tx, workspaceId)),
          now: clock(),
          workspaceId,
          activityRetentionDays: deps.activityRetentionDays,
        };
        await deps.audiences.setFilter(
          tx,
          workspaceId,
          audienceId,
          filter,
          followsClock(filter) ? new Date(context.now) : null,
        );
        if (naming) {
          // The rules read before this one was stored, with it in place of the old one.
          const others = (await naming).filter((rule) => rule.id !== audienceId);
          // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent, audiencesOf(null) is empty (the test of null is for the type)
          const named = filter !== null && audiencesOf(filter).length > 0;
          naming = Promise.resolve(named ? [...others, { id: audienceId, filter }] : others);
        }
        const changes = report("rule", await sets.recompute(tx, workspaceId, audienceId, filter, context));
        await following.followAudiences(w, changes);
        return one(audienceId, "rule", changes);
      },
      async copyUnion(targetId, sourceIds) {
        // The member lock: no member the union holds can be deleted before the new audience exists.
        requireMembers("merging");
        for (const id of sourceIds) requireAudience(id, "share", "merging");
        await deps.audiences.inheritClock(tx, workspaceId, targetId, sourceIds);
        return one(targetId, "merge", report("merge", await sets.copyUnion(tx, workspaceId, targetId, sourceIds)));
      },
      readMembers(memberIds) {
        const members = { rowsOf: memberIds };
        return locks.readUnderMembers(lockFirst, "reading members to change", {
          alongside: () => ruleMatchesJson(workspaceId, memberIds, members),
          parse: ruleReadOf,
          read: () => deps.rules.ruleMatches(tx, workspaceId, memberIds, members),
        });
      },
      async followMembers(memberIds, known = [], along = {}) {
        requireMembers("following member changes");
        if (memberIds.length === 0) {
          if (along.writes) await sets.applyMatches(tx, workspaceId, [], [], { writes: along.writes });
          return [];
        }
        return following.followMembers(w, memberIds, known, along);
      },
      async readActivityRules() {
        const rules = await locks.readUnderMembers(lockFirst, "reading the rules that follow activities", {
          alongside: () => activityRulesJson(workspaceId),
          parse: (json) => JSON.parse(json) as FollowingRule[],
          // Read once per write: followActivities takes them as read.
          read: activityRules,
        });
        followingRules = Promise.resolve(rules);
      },
      async followActivities(stored) {
        requireMembers("following activities");
        return following.followActivities(w, stored);
      },
      async followClock() {
        requireMembers("following the clock");
        return following.followClock(w);
      },
      async forgetMembers(seqs) {
        requireMembers("deleting members");
        if (!locks.holdsAll()) throw new LockOrderError("deleting members needs every audience locked");
        return report("member_deleted", await sets.forget(tx, workspaceId, seqs));
      },
      async snapshot(targetId, sourceId) {
        // As for a merge: under the member lock, no member the copy holds can be deleted before
        // the new audience exists (a deletion locks every audience it can see, not this one).
        requireMembers("snapshotting");
        requireAudience(sourceId, "share", "snapshotting");
        const changes = report("snapshot", await sets.copyMembers(tx, workspaceId, targetId, sourceId));
        return one(targetId, "snapshot", changes);
      },
    };
  }

  /**
   * Runs fn as one write transaction of the workspace, whether or not it changes membership (an
   * audience renamed, a field typed): the one place the workspace's locks are taken, in order.
   * With `memberWrites`, the workspace's member lock is taken first: for writes that create,
   * change or delete members, set a rule or merge. With `lockWithFirstRead` too, it is taken by
   * fn's first statement, which must be `readMembers`, `writable`, `readCandidates`,
   * `readFieldTypes` or `readActivityRules` (anything else before it throws LockOrderError): the
   * lock and what the write reads first in one round trip.
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
      const value = await fn(writer(tx, workspaceId, locks, recorded, lockFirst));
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

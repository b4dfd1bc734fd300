import type { Prisma } from "../../../generated/prisma/client.ts";
import { type SqlClient, withCommit } from "../../platform/db/sql-client.ts";
import type { AudienceRepo } from "./audience-repo.ts";
import { namingAndSeqsJson, namingAndSeqsOf, ruleChangeRead } from "./lock-reads-sql.ts";
import { type ChangeReason, EMPTY_SET, type MembershipChange } from "./member-set.ts";
import type { MembershipRepo, SetChange } from "./membership-repo.ts";
import type { WriteClosing } from "./membership-sql.ts";
import type { MembershipWriter, NamingRule } from "./membership-writer-types.ts";
import type { OutboxEntry } from "./outbox-entries.ts";
import { type ActivityRuleRepo, activityRulesJson, type FollowingRule } from "./rules/activity-rule-repo.ts";
import { audienceGraph, followersInOrder } from "./rules/audience-graph.ts";
import { declaredTypesJson, type FieldTypeRepo, typesOf } from "./rules/field-type-repo.ts";
import { audiencesOf, followsClock } from "./rules/filter.ts";
import type { RuleFollowing } from "./rules/rule-following.ts";
import { namingAudiencesJson, namingOf, type RuleRepo, ruleMatchesJson, ruleReadOf } from "./rules/rule-repo.ts";
import type { WriteRecords } from "./transition-repo.ts";
import { candidatesJson, candidatesOf, type MemberCandidateRepo } from "./upsert/member-candidates-repo.ts";
import { LockOrderError, type WriteLocks } from "./write-locks.ts";

/**
 * What a writer writes and reads through: membership-service.ts's repositories, its clock and its
 * rule following.
 */
export interface WriterDeps {
  sets: Pick<
    MembershipRepo,
    "include" | "exclude" | "recompute" | "copyUnion" | "applyMatches" | "forget" | "copyMembers"
  >;
  rules: Pick<RuleRepo, "ruleMatches" | "namingAudiences">;
  candidates: MemberCandidateRepo;
  audiences: Pick<AudienceRepo, "setFilter" | "inheritClock">;
  fieldTypes: Pick<FieldTypeRepo, "types">;
  activities: Pick<ActivityRuleRepo, "activityRules">;
  /** ACTIVITY_RETENTION_DAYS: activity conditions count no activity older (none when absent: tests). */
  activityRetentionDays?: number | undefined;
  /** Where a write's last statement gets its closing parts from (transition-repo.ts). */
  records: Pick<WriteRecords, "inStatement">;
  /** The time rules are evaluated at. */
  clock: () => number;
  /** How rule-based audiences follow the writer's changes (rule-following.ts). */
  following: RuleFollowing;
}

/** One write transaction, as membership-service.ts workspaceWrite opens it. */
export interface WriteTransaction {
  tx: SqlClient;
  workspaceId: string;
  locks: WriteLocks;
  /** Collects the write's events, in order; workspaceWrite records them before it commits. */
  recorded: OutboxEntry[];
  /**
   * Set when the write's last statement carried its closing parts (`closing`): how many entries
   * they recorded, and that statement's changes. workspaceWrite then records nothing itself, and
   * no other change may be reported after.
   */
  closed: { entries?: number; changes?: Set<SetChange> };
  /** The member lock is still to be taken, by the write's first read (lockWithFirstRead). */
  lockFirst: boolean;
}

/**
 * Every change of an audience's members passes through here, in the transaction that made it:
 * which members entered and which left each audience, and why. They become the write's
 * audience.members_changed events (recorded before it commits); this is the place to make
 * something else happen when membership changes.
 */
function membershipChanged(
  write: Pick<WriteTransaction, "recorded" | "closed">,
  reason: ChangeReason,
  setChanges: SetChange[],
): MembershipChange[] {
  const changes = setChanges.map((change) => ({ ...change, reason }));
  const { closed } = write;
  if (closed.entries === undefined) {
    for (const change of changes) write.recorded.push({ type: "audience.members_changed", ...change });
    return changes;
  }
  // A write's last statement recorded its own changes; any other would go unrecorded.
  if (setChanges.some((change) => !closed.changes?.has(change))) {
    throw new Error("a write changed members after its closing statement");
  }
  return changes;
}

/**
 * The writer workspaceWrite hands its function (membership-writer-types.ts): each method checks
 * the locks its change needs (LockOrderError before any statement), makes the change, reports it
 * and has the rule-based audiences follow.
 */
export function createMembershipWriter(deps: WriterDeps, write: WriteTransaction): MembershipWriter {
  const { sets, following, clock } = deps;
  const { tx, workspaceId, locks, recorded, lockFirst, closed } = write;
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
  const report = (reason: ChangeReason, setChanges: SetChange[]) => membershipChanged(write, reason, setChanges);
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
  /**
   * The closing parts for the write's last statement, which may move `moving` (each an
   * audience.members_changed entry after the write's others, standing for that statement's change
   * of it). Only while the write has moved nobody before: its entries would have to be netted with
   * that statement's, which only the process does (net-changes.ts).
   */
  const closing = (moving: { audienceId: string; reason: ChangeReason }[]): WriteClosing | undefined => {
    if (closed.entries !== undefined || recorded.some((entry) => entry.type === "audience.members_changed")) {
      return undefined;
    }
    return {
      sql: (into) => {
        const changes = into === "diff" ? moving : [];
        const entries: OutboxEntry[] = [
          ...recorded,
          ...changes.map(({ audienceId, reason }) => ({
            type: "audience.members_changed" as const,
            audienceId,
            reason,
            entered: EMPTY_SET,
            left: EMPTY_SET,
          })),
        ];
        return deps.records.inStatement(workspaceId, entries, into === "diff");
      },
      sent: (changes) => {
        closed.entries = recorded.length;
        closed.changes = new Set(changes);
      },
    };
  };
  /** Locks an audience whose members change by hand, reading `alongside` (write-locks.ts writableReading). */
  const lockWritable = (audienceId: string, alongside: Prisma.Sql) => {
    const memberLock = lockingRead();
    if (!memberLock) requireMembers("locking an audience with the rules that follow it");
    return locks.writableReading(audienceId, alongside, { memberLock });
  };
  /** The closing parts for a change by hand of an audience no rule follows (its change is the write's last). */
  const closingUnfollowed = async (audienceId: string, reason: ChangeReason = "manual") => {
    const followed = followersInOrder(audienceGraph(await namingAudiences()), [audienceId]).length > 0;
    return followed ? undefined : closing([{ audienceId, reason }]);
  };
  const w = { tx, workspaceId, locks, report, naming: namingAudiences, activityRules, closing };

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
      const { row, read } = await lockWritable(audienceId, namingAudiencesJson(workspaceId));
      if (read !== undefined && !naming) naming = Promise.resolve(namingOf(read));
      return row;
    },
    async writableWithSeqs(audienceId, memberIds) {
      if (memberIds.length === 0) return { row: await this.writable(audienceId), seqs: new Map(), ruled: undefined };
      const { row, read } = await lockWritable(audienceId, namingAndSeqsJson(workspaceId, memberIds));
      if (read === undefined) return { row, seqs: undefined, ruled: undefined };
      const { naming: rules, seqs, ruled } = namingAndSeqsOf(read);
      if (!naming) naming = Promise.resolve(rules);
      return { row, seqs, ruled };
    },
    async include(audienceId, seqs, { last = false } = {}) {
      // Stryker disable next-line StringLiteral: equivalent, a lock is held for update or share, so any mode but "share" means update
      requireAudience(audienceId, "update", "adding members");
      // The member lock: the audiences whose rules name this one follow it, locked as they do.
      requireMembers("adding members");
      const close = last ? await closingUnfollowed(audienceId) : undefined;
      const changes = report("manual", await sets.include(tx, workspaceId, audienceId, seqs, close));
      await following.followAudiences(w, changes);
      return one(audienceId, "manual", changes);
    },
    async exclude(audienceId, memberIds, { last = false } = {}) {
      // Stryker disable next-line StringLiteral: equivalent, as in include
      requireAudience(audienceId, "update", "removing members");
      requireMembers("removing members");
      const close = last ? await closingUnfollowed(audienceId) : undefined;
      const changes = report("manual", await sets.exclude(tx, workspaceId, audienceId, memberIds, close));
      await following.followAudiences(w, changes);
      return one(audienceId, "manual", changes);
    },
    readCandidates: (ids, emailKeys, { rules = false } = {}) =>
      locks.readUnderMembers(lockFirst, "reading an upsert's candidates", {
        alongside: () => candidatesJson(workspaceId, ids, emailKeys, { rules }),
        parse: candidatesOf,
        read: () => deps.candidates.candidates(tx, workspaceId, ids, emailKeys),
      }),
    readFieldTypes: () =>
      locks.readUnderMembers(lockFirst, "reading the field types", {
        alongside: () => declaredTypesJson(workspaceId),
        parse: (json) => typesOf(JSON.parse(json)),
        read: () => deps.fieldTypes.types(tx, workspaceId),
      }),
    async readRuleChange(audienceId) {
      const first = lockingRead();
      if (!first) requireMembers("reading a rule's change");
      const types = () => deps.fieldTypes.types(tx, workspaceId);
      const read = await ruleChangeRead(locks, first, audienceId, { workspaceId, types });
      if (read.naming && !naming) naming = Promise.resolve(read.naming);
      return read;
    },
    namingAudiences,
    async setRule(audienceId, filter, types, { last = false } = {}) {
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
      // The rule's change is the write's last when nothing follows the audience: then its row's
      // update goes with the recompute, which commits the write (withCommit: unanswered, sent with
      // the next statement).
      const close = last ? await closingUnfollowed(audienceId, "rule") : undefined;
      await deps.audiences.setFilter(
        close ? withCommit(tx) : tx,
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
      const changes = report("rule", await sets.recompute(tx, workspaceId, audienceId, filter, context, close));
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
        if (along.writes) {
          const last = along.last ? closing([]) : undefined;
          await sets.applyMatches(tx, workspaceId, [], [], { writes: along.writes, closing: last });
        }
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
    async followActivities(stored, { last = false } = {}) {
      requireMembers("following activities");
      return following.followActivities(w, stored, last);
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

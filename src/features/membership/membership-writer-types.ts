import type { FieldTypes } from "../../domain/field-types.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";
import type { AudienceRow } from "./audience-repo.ts";
import type { RuleChangeRead } from "./lock-reads-sql.ts";
import type { FoldedMemberRow } from "./member-repo.ts";
import type { MembershipChange } from "./member-set.ts";
import type { OutboxEntry } from "./outbox-entries.ts";
import type { StoredActivity } from "./rules/activity-ingest/activity-batch.ts";
import type { Filter } from "./rules/filter.ts";
import type { FollowAlong } from "./rules/rule-following.ts";
import type { RuleRead } from "./rules/rule-repo.ts";
import type { Candidates } from "./upsert/member-candidates-repo.ts";
import type { WriteLocks } from "./write-locks.ts";

/** How a write takes the workspace's locks (membershipService.workspaceWrite). */
export type WriteOptions = { memberWrites: false } | { memberWrites: true; lockWithFirstRead?: boolean };

/** An audience whose rule names other audiences. */
export type NamingRule = { id: string; filter: Filter };

/**
 * One write transaction of a workspace: its locks (taken in order, see write-locks.ts) and every
 * change to audiences' members. Each change is one statement that keeps the audience's sets and
 * member_count consistent (membership-repo.ts) and is reported to `membershipChanged`.
 */
export interface MembershipWriter {
  readonly tx: SqlClient;
  readonly workspaceId: string;
  readonly locks: WriteLocks;
  /** Records events of this write that are not membership changes (audiences, members' data). */
  publish(...entries: OutboxEntry[]): void;
  /**
   * Locks an audience to add or remove its members by hand (locks.writable: 404, 409), reading in
   * the same statement the rules that name audiences, which follow it (namingAudiences): they
   * change only under the member lock, which must be held (with `lockWithFirstRead`, taken by
   * that statement as the write's first).
   */
  writable(audienceId: string): Promise<AudienceRow>;
  /**
   * As writable, reading in the same statement the numbers of these members (of those that
   * exist) and whether any audience has a rule (`ruled`): they change only under the member lock.
   * Undefined when they were not read so (no members named, or a member write committed while
   * this one waited for the lock).
   */
  writableWithSeqs(
    audienceId: string,
    memberIds: string[],
  ): Promise<{ row: AudienceRow; seqs: Map<string, number> | undefined; ruled: boolean | undefined }>;
  /**
   * Adds members (by number) by hand to an audience locked with locks.writable. With `last`,
   * nothing follows in the write: when no rule follows the audience, the write's events ride in
   * this statement, which commits it (a round trip less).
   */
  include(audienceId: string, seqs: number[], options?: { last?: boolean }): Promise<MembershipChange>;
  /** Removes members by hand from an audience locked with locks.writable (`last` as in include). */
  exclude(audienceId: string, memberIds: string[], options?: { last?: boolean }): Promise<MembershipChange>;
  /**
   * What an upsert matches its inputs against (member-resolution.ts): the owners of these e-mail
   * keys, the members of these ids and the owners, and the field types, in one statement (member
   * lock; with `lockWithFirstRead`, that statement takes it as the write's first). With `rules`,
   * that statement reads what following the candidates' change evaluates too (`rules`).
   */
  readCandidates(ids: string[], emailKeys: string[], options?: { rules?: boolean }): Promise<Candidates>;
  /**
   * The workspace's field types, read under the member lock (which a field's declaration takes
   * too: they cannot change before the write commits); with `lockWithFirstRead`, in the member
   * lock's statement.
   */
  readFieldTypes(): Promise<FieldTypes>;
  /**
   * For a change of an audience's rule: the member lock and the audience's lock, and what the rule
   * is checked against (the field types, the rules that name audiences, every rule, the member
   * numbers handed out), in one statement as the write's first (`lockWithFirstRead`); under a
   * member lock taken before, the audience's lock and the types. The audience's 404 and 409 wait
   * for `writable()`, so that a bad rule is told first.
   */
  readRuleChange(audienceId: string): Promise<RuleChangeRead>;
  /**
   * Stores the audience's rule and recomputes its members (member lock, audience locked).
   * `types`: the workspace's field types, when the caller read them under the member lock. With
   * `last`, nothing follows in the write: when no rule follows the audience, its row's update and
   * the write's events ride with the recompute, which commits it.
   */
  setRule(
    audienceId: string,
    filter: Filter | null,
    types?: FieldTypes,
    options?: { last?: boolean },
  ): Promise<MembershipChange>;
  /**
   * The audiences whose rules name other audiences (ruleRepo.namingAudiences), read once per write
   * and kept current by setRule: checking a new rule and following its change need it both.
   */
  namingAudiences(): Promise<NamingRule[]>;
  /** Fills a new audience with the union of two sources locked with locks.sources. */
  copyUnion(targetId: string, sourceIds: string[]): Promise<MembershipChange>;
  /**
   * These members and all that following their change evaluates, in one statement (member lock;
   * with `lockWithFirstRead`, that statement takes it as the write's first).
   */
  readMembers(memberIds: string[]): Promise<RuleRead>;
  /**
   * After members were created or changed: every rule-based audience follows (member lock).
   * `known`: some of them as they now stand, when the caller has them (they are not read again).
   * `along`: readMembers' read (no audience changed since) and writes to ride along (settle.ts);
   * with `last`, nothing follows in the write: its events ride in the statement too, which
   * commits it.
   */
  followMembers(memberIds: string[], known?: FoldedMemberRow[], along?: FollowAlong): Promise<MembershipChange[]>;
  /**
   * Reads the rules that follow activities (activityRuleRepo.activityRules), which
   * followActivities then takes as read: once per write, and with `lockWithFirstRead` in the member
   * lock's statement (rules change only under the member lock, held from then on).
   */
  readActivityRules(): Promise<void>;
  /**
   * After activities were stored (each one's member number and type, and when it occurred and its
   * properties, which let a rule skip the members none of whose new activities it counts): the
   * audiences whose rules count such activities follow, for those members (member lock). With
   * `last`, nothing follows in the write: when no rule names those audiences, the write's events
   * ride in the statement that moves them, which commits it.
   */
  followActivities(stored: StoredActivity[], options?: { last?: boolean }): Promise<MembershipChange[]>;
  /**
   * Relative-time rules catch up with the clock: the members whose dates crossed a window's edge
   * since their audience was last brought up to date enter or leave (member lock).
   */
  followClock(): Promise<MembershipChange[]>;
  /** Members being deleted leave every audience (member lock, every audience locked). */
  forgetMembers(seqs: number[]): Promise<MembershipChange[]>;
  /** Fills a new audience with the members of a source locked with locks.sources, added by hand. */
  snapshot(targetId: string, sourceId: string): Promise<MembershipChange>;
}

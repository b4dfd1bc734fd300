// In-memory stand-ins for the repositories the membership module is given, so that services can be
// tested without a database. FakeSets keeps each audience's four sets as JS sets and reports
// changes as the SQL statements do; test/store/membership-changes.test.ts checks the two agree.
// Rules are evaluated by the tests' reference evaluator, not by the filter code under test.

import { Prisma } from "../../../generated/prisma/client.ts";
import type { FieldType } from "../../../src/domain/field-types.ts";
import type { AudienceRow } from "../../../src/features/membership/audience-repo.ts";
import { memberSetOf } from "../../../src/features/membership/member-set.ts";
import type { SetChange } from "../../../src/features/membership/membership-repo.ts";
import {
  createMembershipService,
  type MembershipDeps,
  type SizeChange,
} from "../../../src/features/membership/membership-service.ts";
import type { WriteClosing } from "../../../src/features/membership/membership-sql.ts";
import { sizeChangesOf } from "../../../src/features/membership/net-changes.ts";
import type { OutboxEntry } from "../../../src/features/membership/outbox-entries.ts";
import { type Filter, type FoldedMember, foldMember } from "../../../src/features/membership/rules/filter.ts";
import type { LockRows } from "../../../src/features/membership/write-locks.ts";
import { type SqlClient, withCommit } from "../../../src/platform/db/sql-client.ts";
import type { EventSink } from "../../support/event-sink.ts";
import {
  type PlainActivity,
  type PlainMember,
  referenceMatches,
  referenceTally,
} from "../../support/reference-filter.ts";

/** The statements sent through fakeTx's $executeRaw (only the record's client sends any). */
export const fakeTxStatements: string[] = [];
export const fakeTx = {
  $executeRaw: async (query: Prisma.Sql) => {
    fakeTxStatements.push(query.text);
    return 0;
  },
} as SqlClient;
export const fakeDb = {} as SqlClient;

/** A store whose transactions run the function once, on a transaction that fakes ignore. */
export const fakeStore = { db: fakeDb, transaction: <T>(fn: (tx: SqlClient) => Promise<T>) => fn(fakeTx) };

export interface FakeMember {
  id: string;
  seq: number;
  createdAt: Date;
  /** What the service reads (members.folded); `plain` is what the reference evaluator reads. */
  folded: FoldedMember;
  plain: PlainMember;
}

interface Sets {
  include: Set<number>;
  exclude: Set<number>;
  match: Set<number>;
  member: Set<number>;
}

/** Members and audiences' sets in memory, with the membership repository's operations. */
export class FakeSets {
  readonly members = new Map<string, FakeMember>();
  readonly sets = new Map<string, Sets>();
  /** Every number ever given, deleted members' too: changes name them after they are gone. */
  private readonly names = new Map<number, string>();
  private nextSeq = 0;
  /** Declared field types, and the time rules are evaluated at. */
  readonly types = new Map<string, FieldType>();
  now = Date.UTC(2026, 5, 1);
  /** Each member's activities, by number, and how many days they are kept (none: all). */
  readonly activities = new Map<number, PlainActivity[]>();
  retentionDays: number | undefined = undefined;

  /** `rules`: the rule-based audiences, in id order (FakeAudiences keeps them). */
  constructor(
    private readonly rules: () => { id: string; filter: Filter }[] = () => [],
    private readonly evaluatedAt = new Map<string, Date>(),
  ) {}

  addMember(id: string, fields: Record<string, string> = {}): FakeMember {
    const createdAt = new Date(Date.UTC(2026, 0, 1, 0, 0, this.nextSeq + 1));
    const plain = { id, email: null, fields, alternativeEmails: [], createdAt };
    const member = { id, seq: this.nextSeq++, createdAt, folded: foldMember(plain), plain };
    this.members.set(id, member);
    this.names.set(member.seq, id);
    return member;
  }

  setFields(id: string, fields: Record<string, string>): void {
    const member = this.members.get(id) as FakeMember;
    member.plain = { ...member.plain, fields };
    member.folded = foldMember(member.plain);
  }

  seqOf = (id: string) => (this.members.get(id) as FakeMember).seq;
  idOf = (seq: number) => this.names.get(seq) as string;
  /** The ids of an audience's members, in number order. */
  memberIds = (audienceId: string) => [...this.of(audienceId).member].sort((a, b) => a - b).map(this.idOf);

  of(audienceId: string): Sets {
    let sets = this.sets.get(audienceId);
    if (!sets) {
      sets = { include: new Set(), exclude: new Set(), match: new Set(), member: new Set() };
      this.sets.set(audienceId, sets);
    }
    return sets;
  }

  /** Makes member = include ∨ (match ∧ ¬exclude) again and reports the difference. */
  private settle(audienceIds: string[]): SetChange[] {
    const changes: SetChange[] = [];
    for (const audienceId of audienceIds) {
      const sets = this.of(audienceId);
      const next = new Set([...sets.include, ...[...sets.match].filter((s) => !sets.exclude.has(s))]);
      const entered = [...next].filter((s) => !sets.member.has(s));
      const left = [...sets.member].filter((s) => !next.has(s));
      sets.member = next;
      if (entered.length + left.length > 0) {
        changes.push({ audienceId, entered: memberSetOf(entered), left: memberSetOf(left) });
      }
    }
    return changes;
  }

  /**
   * What a write's closing parts record, as its last statement would: set by fakeMembership to
   * record these entries as the write's own record would.
   */
  recordClosing: (tx: SqlClient, entries: OutboxEntry[]) => Promise<void> = async () => {};
  /** The entries of the closing parts last asked for (the fake records' inStatement). */
  closingEntries: OutboxEntry[] | undefined;

  /**
   * A statement that carries the write's closing parts (membership-sql.ts changesOf): each of
   * their audience.members_changed entries stands for this statement's change of its audience,
   * and is recorded only if it changed.
   */
  private async closeWith(
    tx: SqlClient,
    changes: SetChange[],
    closing: WriteClosing | undefined,
    into: "diff" | "nothing" = "diff",
  ) {
    if (!closing) return changes;
    this.closingEntries = undefined;
    closing.sql(into);
    // Set by closing.sql (TypeScript does not see the call set it).
    const asked = this.closingEntries as OutboxEntry[] | undefined;
    const entries = (asked ?? []).flatMap((entry): OutboxEntry[] => {
      if (entry.type !== "audience.members_changed") return [entry];
      const change = changes.find((c) => c.audienceId === entry.audienceId);
      return change ? [{ ...entry, entered: change.entered, left: change.left }] : [];
    });
    if (entries.length > 0) await this.recordClosing(tx, entries);
    closing.sent(changes);
    return changes;
  }

  readonly repo: MembershipDeps["sets"] = {
    include: async (tx, _ws, audienceId, seqs, closing) => {
      const sets = this.of(audienceId);
      for (const seq of seqs) {
        sets.include.add(seq);
        sets.exclude.delete(seq);
      }
      return this.closeWith(tx, this.settle([audienceId]), closing);
    },
    exclude: async (tx, _ws, audienceId, memberIds, closing) => {
      const sets = this.of(audienceId);
      for (const id of memberIds) {
        const member = this.members.get(id);
        if (!member) continue;
        sets.exclude.add(member.seq);
        sets.include.delete(member.seq);
      }
      return this.closeWith(tx, this.settle([audienceId]), closing);
    },
    recompute: async (tx, _ws, audienceId, filter, _context, closing) => {
      this.of(audienceId).match = new Set(this.matching(filter));
      return this.closeWith(tx, this.settle([audienceId]), closing);
    },
    copyUnion: async (_tx, _ws, targetId, sourceIds) => {
      const sources = sourceIds.map((id) => this.of(id));
      const target = this.of(targetId);
      for (const source of sources) {
        for (const seq of source.include) target.include.add(seq);
        for (const seq of source.match) target.match.add(seq);
        for (const seq of source.member) target.member.add(seq);
      }
      for (const seq of target.match) if (!target.member.has(seq)) target.exclude.add(seq);
      if (target.member.size === 0) return [];
      return [{ audienceId: targetId, entered: memberSetOf(target.member), left: memberSetOf([]) }];
    },
    applyMatches: async (tx, _ws, changed, matched, along = {}) => {
      for (const { audienceId, seqs, among = [] } of matched) {
        const match = this.of(audienceId).match;
        for (const seq of changed === "own" ? among : changed) match.delete(seq);
        for (const seq of seqs) match.add(seq);
      }
      // Nothing evaluated: the statement moves nobody (membership-repo.ts applyMatches).
      const into = matched.length === 0 ? "nothing" : "diff";
      return this.closeWith(tx, this.settle(matched.map((m) => m.audienceId)), along.closing, into);
    },
    forget: async (_tx, _ws, seqs) => {
      const changes: SetChange[] = [];
      for (const [audienceId, sets] of this.sets) {
        const left = seqs.filter((seq) => sets.member.has(seq));
        for (const set of Object.values(sets)) for (const seq of seqs) set.delete(seq);
        if (left.length > 0) changes.push({ audienceId, entered: memberSetOf([]), left: memberSetOf(left) });
      }
      return changes;
    },
    copyMembers: async (_tx, _ws, targetId, sourceId) => {
      const members = [...this.of(sourceId).member];
      const target = this.of(targetId);
      target.include = new Set(members);
      target.member = new Set(members);
      if (members.length === 0) return [];
      return [{ audienceId: targetId, entered: memberSetOf(members), left: memberSetOf([]) }];
    },
  };

  readonly ruleRepo: MembershipDeps["rules"] = {
    ruleMatches: async (_tx, _ws, memberIds, asked = {}) => {
      const seqs = memberIds.flatMap((id) => this.members.get(id)?.seq ?? []);
      const rules = this.rules().map(({ id, filter }) => ({
        id,
        filter,
        matched: seqs.filter((seq) => this.of(id).match.has(seq)),
      }));
      const held = new Map(
        [...new Set(rules.flatMap((rule) => namedAudiences(rule.filter)))].map((id) => {
          const sets = this.of(id);
          const among = (set: Set<number>) => seqs.filter((seq) => set.has(seq));
          return [id, { include: among(sets.include), exclude: among(sets.exclude), member: among(sets.member) }];
        }),
      );
      // The fakes hold members only as rules see them: a member's data is the service's (no fake reads it).
      const folded = (asked.foldedOf ?? []).flatMap((id) => this.members.get(id) ?? []);
      return { types: new Map(this.types), rules, held, rows: [], folded };
    },
    matchesAmong: async (_tx, _ws, filter, _context, seqs) => {
      const matching = new Set(this.matching(filter));
      return seqs.filter((seq) => matching.has(seq));
    },
    matchesAmongMany: async (_tx, _ws, rules) =>
      rules.map(({ audienceId, filter, among }) => {
        const matching = new Set(this.matching(filter));
        return { audienceId, among, seqs: among.filter((seq) => matching.has(seq)) };
      }),
    namingAudiences: async () =>
      this.rules()
        .filter((rule) => namedAudiences(rule.filter).length > 0)
        .map((rule) => ({ ...rule, isArchived: false })),
    timeRules: async () =>
      this.rules().flatMap((rule) => {
        const at = this.evaluatedAt.get(rule.id);
        return at ? [{ ...rule, evaluatedAt: at }] : [];
      }),
    // Every member of the workspace for each range: more than the database reads, which the
    // evaluation that follows must not mind.
    inRanges: async (_tx, _ws, ranges) =>
      new Map(ranges.map((range) => [range.audienceId, [...this.members.values()].map((m) => m.seq)])),
    evaluated: async (_tx, _ws, ids, at) => {
      for (const id of ids) this.evaluatedAt.set(id, at);
    },
  };

  /** What the service reads of activities, answered by the reference evaluator. */
  readonly activityRepo: MembershipDeps["activities"] = {
    activityRules: async () =>
      this.rules().flatMap((rule) => {
        const counts = JSON.stringify(rule.filter).includes('"activity":');
        const names = namedAudiences(rule.filter).length > 0;
        return counts || names ? [{ id: rule.id, filter: rule.filter as Filter, counts, names }] : [];
      }),
    tallies: async (_tx, _ws, seqs, conditions, context) =>
      new Map(
        seqs.map((seq) => {
          const reference = { ...this.activityContext(), now: context.now };
          const member = this.members.get(this.names.get(seq) as string)?.plain as PlainMember;
          return [seq, conditions.map((c) => referenceTally(c, member, reference))];
        }),
      ),
    // Every member with activities for each span: more than the database reads, as inRanges.
    crossings: async (_tx, _ws, spans) => new Map(spans.map((span) => [span.audienceId, [...this.activities.keys()]])),
  };

  private activityContext() {
    return {
      retentionDays: this.retentionDays,
      activities: (member: PlainMember) => this.activities.get(this.seqOf(member.id)) ?? [],
    };
  }

  matching(filter: Filter | null): number[] {
    const context = {
      types: Object.fromEntries(this.types),
      now: this.now,
      inAudience: (audienceId: string, member: PlainMember) => this.of(audienceId).member.has(this.seqOf(member.id)),
      ...this.activityContext(),
    };
    return [...this.members.values()].filter((m) => referenceMatches(filter, m.plain, context)).map((m) => m.seq);
  }

  readonly memberReads: MembershipDeps["members"] = {
    folded: async (_tx, _ws, ids) => ids.flatMap((id) => this.members.get(id) ?? []),
    foldedBySeq: async (_tx, _ws, seqs) =>
      seqs.flatMap((seq) => {
        const id = this.names.get(seq);
        return id === undefined ? [] : (this.members.get(id) ?? []);
      }),
  };
}

/** The audiences a filter's audience conditions name (walked here, not by the code under test). */
function namedAudiences(filter: Filter | null): string[] {
  if (filter === null) return [];
  if ("all" in filter) return filter.all.flatMap(namedAudiences);
  if ("any" in filter) return filter.any.flatMap(namedAudiences);
  if ("not" in filter) return namedAudiences(filter.not);
  return !("activity" in filter) && filter.field === "audience" ? [filter.value as string] : [];
}

/** Audience rows in memory, and a lock repository over them that records every lock taken. */
export class FakeAudiences {
  readonly rows = new Map<string, AudienceRow & { ruleOutdated?: boolean }>();
  /** When each audience that follows the clock was last brought up to date. */
  readonly evaluatedAt = new Map<string, Date>();
  readonly taken: string[] = [];

  add(id: string, row: Partial<AudienceRow> = {}): AudienceRow {
    const audience = { id, name: id, filter: null, isArchived: false, memberCount: 0, createdAt: new Date(0), ...row };
    this.rows.set(id, audience);
    return audience;
  }

  /** The rule-based audiences with their rules, in id order. */
  ruleBased = (): { id: string; filter: Filter }[] =>
    [...this.rows.values()]
      .flatMap((row) => (row.filter === null ? [] : [{ id: row.id, filter: row.filter }]))
      .sort((a, b) => (a.id < b.id ? -1 : 1));

  readonly locks: LockRows = {
    memberWrites: async () => {
      this.taken.push("members");
    },
    audiences: async (_tx, _ws, ids, mode) => {
      const sorted = [...new Set(ids)].sort();
      this.taken.push(...sorted.map((id) => `${mode} ${id}`));
      return sorted.flatMap((id) => this.rows.get(id) ?? []);
    },
    // The fakes read nothing alongside (undefined: the writer reads it on its own, as it did).
    memberWritesReading: async () => {
      this.taken.push("members");
      return undefined;
    },
    audienceReading: async (_tx, _ws, id, _alongside, memberLock) => {
      if (memberLock) this.taken.push("members");
      this.taken.push(`update ${id}`);
      return { row: this.rows.get(id), read: undefined };
    },
    audiencesForUpdateSql: (_ws, ids) => {
      this.taken.push(...[...new Set(ids)].sort().map((id) => `update ${id}`));
      return Prisma.empty;
    },
    allAudiences: async () => {
      const ids = [...this.rows.keys()].sort();
      this.taken.push(...ids.map((id) => `update ${id}`));
      return ids;
    },
    ruleOutdated: async (_tx, _ws, id) => {
      const row = this.rows.get(id);
      return row?.ruleOutdated ? row : undefined;
    },
  };

  readonly repo: MembershipDeps["audiences"] = {
    setFilter: async (_tx, _ws, id, filter, evaluatedAt) => {
      const row = this.rows.get(id) as AudienceRow & { ruleOutdated?: boolean };
      row.filter = filter;
      row.ruleOutdated = false;
      if (evaluatedAt === null) this.evaluatedAt.delete(id);
      else this.evaluatedAt.set(id, evaluatedAt);
    },
    inheritClock: async (_tx, _ws, id, sourceIds) => {
      const times = sourceIds.flatMap((source) => this.evaluatedAt.get(source) ?? []);
      if (times.length === 0) this.evaluatedAt.delete(id);
      else this.evaluatedAt.set(id, new Date(Math.min(...times.map((t) => t.getTime()))));
    },
    listRuleOutdated: async () =>
      [...this.rows.values()].filter((row) => row.ruleOutdated).map((row) => ({ workspaceId: "ws", id: row.id })),
  };
}

/** Where a fake write's size history goes: the sizes, at the instant its record gave them. */
export interface SizeHistorySink {
  record(tx: SqlClient, workspaceId: string, changes: SizeChange[], at: Date): Promise<void>;
}

/** Where a fake write's membership record goes: returns the instant it recorded them at. */
export interface TransitionSink {
  record(tx: SqlClient, workspaceId: string, entries: OutboxEntry[]): Promise<Date | undefined>;
}

/**
 * The membership module on fakes: in-memory sets and audiences, events recorded by `events`, then
 * the record by `transitions` and the sizes by `history` (in the service, one statement of all three).
 */
export function fakeMembership(
  events: EventSink,
  history: SizeHistorySink = { record: async () => {} },
  activityRetentionDays?: number,
  transitions: TransitionSink = { record: async () => new Date() },
) {
  const audiences = new FakeAudiences();
  const sets = new FakeSets(audiences.ruleBased, audiences.evaluatedAt);
  sets.retentionDays = activityRetentionDays;
  const fieldTypes = { types: async (_tx: unknown, _ws: string) => new Map(sets.types) };
  // An upsert's candidates: no member holds an e-mail here, and members are read by id.
  const candidates: MembershipDeps["candidates"] = {
    candidates: async (_tx, _ws, ids) => ({
      owners: new Map(),
      rows: ids.flatMap((id) => {
        const member = sets.members.get(id);
        return member
          ? [{ id, seq: member.seq, createdAt: member.createdAt, email: null, fields: {}, alternativeEmails: [] }]
          : [];
      }),
      types: new Map(sets.types),
    }),
  };
  const records: MembershipDeps["records"] = {
    async record(tx, workspaceId, entries, sizes) {
      await events.record(tx, workspaceId, entries);
      // A write that moved nobody has no record (its statement would have no rows of it).
      if (sizes.length === 0) return;
      const at = await transitions.record(tx, workspaceId, entries);
      await history.record(tx, workspaceId, sizes, at ?? new Date());
    },
    // The parts a statement carries: the fake sets record them once that statement has run. In
    // a statement that moves nobody, an entry standing for its changes has nothing to read.
    inStatement: (_ws, entries, fromDiff) => {
      if (!fromDiff && entries.some((entry) => entry.type === "audience.members_changed")) {
        throw new Error("closing parts that read a statement's changes, in one that has none");
      }
      sets.closingEntries = entries;
      return Prisma.sql`SELECT 1`;
    },
  };
  const membership = createMembershipService({
    store: fakeStore,
    locks: audiences.locks,
    sets: sets.repo,
    rules: sets.ruleRepo,
    members: sets.memberReads,
    candidates,
    audiences: audiences.repo,
    fieldTypes,
    activities: sets.activityRepo,
    activityRetentionDays,
    clock: () => sets.now,
    events,
    records,
  });
  // A write's last statement records what it carries as a record of its own would, and as the
  // last statement before the COMMIT.
  sets.recordClosing = (tx, entries) => records.record(withCommit(tx), "ws", entries, sizeChangesOf(entries));
  return { sets, audiences, membership, fieldTypes, candidates };
}

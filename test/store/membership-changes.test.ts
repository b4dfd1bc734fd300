// The membership module's statements report who entered and who left each audience (the event
// feed publishes exactly that) and move member_count in the same statement. Random sequences of
// writes run against the real store and against the in-memory fakes of test/unit/fakes; after
// every write both must have reported exactly the changes that a model of the membership rule
//   member ∈ A ⇔ include(A, m) ∨ (rule(A) matches m ∧ ¬exclude(A, m))
// gives (rule-model.ts: no code of the service, rules judged by the reference evaluator), with the
// reason each change is reported with, and every stored count must equal the model's. Rules use
// string fields, a declared number and date field (relative time too, at a clock that "tick"
// steps move on, followed by membership.followClock), and other audiences' members
// (membership-steps.ts). On the embedded store, and on PostgreSQL when
// TEST_DATABASE_URL is set. Each member
// gets a chunk of its own, so that a write of a few members reads the audiences' chunks by key and
// one of more members hashes them (membership-sql.ts, readsByKey): both plans are checked.

import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workspaceRepo } from "../../src/features/admin/workspace-repo.ts";
import { recordRepo } from "../../src/features/history/record-repo.ts";
import { activityRepo } from "../../src/features/membership/activity-repo.ts";
import { audienceRepo } from "../../src/features/membership/audience-repo.ts";
import { memberRepo } from "../../src/features/membership/member-repo.ts";
import { CHUNK_BITS, type MembershipChange, membersOf } from "../../src/features/membership/member-set.ts";
import type { MembershipService } from "../../src/features/membership/membership-service.ts";
import type { StoredActivity } from "../../src/features/membership/rules/activity-ingest/activity-batch.ts";
import { fieldTypeRepo } from "../../src/features/membership/rules/field-type-repo.ts";
import { type Filter, unionFilter } from "../../src/features/membership/rules/filter.ts";
import type { Store } from "../../src/platform/db/database.ts";
import type { SqlClient } from "../../src/platform/db/sql-client.ts";
import type { EventSink } from "../support/event-sink.ts";
import { openTestStore } from "../support/live-server.ts";
import { storeMembership } from "../support/store-membership.ts";
import { fakeMembership } from "../unit/fakes/fake-stores.ts";
import {
  AUDIENCES,
  DAY,
  type Data,
  IN_B_OR_RECENT,
  NOT_RECENT,
  ORDERED_RECENTLY,
  RECENT,
  RETENTION_DAYS,
  RULES,
  START,
  type Step,
  step,
  TYPES,
  VISITED_TWICE,
} from "./membership-steps.ts";
import { RuleModel, type Seen } from "./rule-model.ts";

const RUNS = 12;

/**
 * Relative-time rules following the clock where random runs seldom go: an audience merged from
 * one (it follows its sources' rules, the clock included), and an audience whose rule names one
 * that the same tick moves (brought up to date after it: one change, or none, not two).
 */
const PINNED: Step[][] = [
  [
    { op: "rule", audience: "aud_c", rule: RULES.indexOf(RECENT) },
    { op: "create", ids: ["m0"], data: { company: "Acme", lastOrder: "2026-05-15" } },
    { op: "merge", sources: ["aud_c", "aud_b"] },
    { op: "tick", days: 31 },
  ],
  [
    { op: "rule", audience: "aud_b", rule: RULES.indexOf(NOT_RECENT) },
    { op: "rule", audience: "aud_a", rule: RULES.indexOf(IN_B_OR_RECENT) },
    { op: "create", ids: ["m0"], data: { company: "Acme", lastOrder: "2026-05-15" } },
    { op: "tick", days: 31 },
  ],
  // An activity that arrives late, then ages out of a window as the clock moves: entered with
  // reason activity, left with reason time, and the audience naming it following both.
  [
    { op: "rule", audience: "aud_c", rule: RULES.indexOf(ORDERED_RECENTLY) },
    { op: "rule", audience: "aud_a", rule: RULES.indexOf(IN_B_OR_RECENT) },
    { op: "rule", audience: "aud_b", rule: RULES.indexOf(VISITED_TWICE) },
    { op: "create", ids: ["m0", "m1"], data: { company: "Acme" } },
    { op: "act", ids: ["m0", "m1"], type: "order", daysAgo: 20, amount: 80 },
    { op: "act", ids: ["m1"], type: "visit", daysAgo: 85, amount: 10 },
    { op: "act", ids: ["m1"], type: "visit", daysAgo: 0, amount: 10 },
    { op: "tick", days: 10 },
    { op: "tick", days: 1 },
  ],
];

/** A world the steps can run in: the real store, or the model. */
interface World {
  membership: MembershipService;
  /** Member numbers → ids, for reading changes. */
  idOf(seq: number): string;
  seqsOf(tx: unknown, ids: string[]): Promise<number[]>;
  createMembers(tx: unknown, ids: string[], data: Data): Promise<void>;
  /** Stores one activity for each member; returns them as followActivities is told of them. */
  storeActivities(tx: unknown, ids: string[], step: Extract<Step, { op: "act" }>): Promise<StoredActivity[]>;
  changeMember(tx: unknown, id: string, data: Data): Promise<void>;
  createAudience(tx: unknown, id: string, filter: Filter | null): Promise<void>;
  deleteMembers(tx: unknown, ids: string[]): Promise<number[]>;
  memberCount(id: string): Promise<number>;
  /** Moves the clock the membership service evaluates rules at. */
  advance(ms: number): void;
}

async function run(world: World, ws: string, step: Step, existing: Set<string>, rules: Map<string, Filter | null>) {
  const write = world.membership.workspaceWrite;
  switch (step.op) {
    case "create": {
      const fresh = step.ids.filter((id) => !existing.has(id));
      for (const id of fresh) existing.add(id);
      return write(ws, { memberWrites: true }, async (w) => {
        await world.createMembers(w.tx, fresh, step.data);
        await w.followMembers(fresh);
      });
    }
    case "change": {
      const changed = step.ids.filter((id) => existing.has(id));
      if (changed.length === 0) return;
      return write(ws, { memberWrites: true }, async (w) => {
        for (const id of changed) await world.changeMember(w.tx, id, step.data);
        await w.followMembers(changed);
      });
    }
    case "add":
      return write(ws, { memberWrites: true }, async (w) => {
        await w.locks.writable(step.audience);
        await w.include(
          step.audience,
          await world.seqsOf(
            w.tx,
            step.ids.filter((id) => existing.has(id)),
          ),
        );
      });
    case "remove":
      return write(ws, { memberWrites: true }, async (w) => {
        await w.locks.writable(step.audience);
        await w.exclude(step.audience, step.ids);
      });
    case "rule":
      rules.set(step.audience, RULES[step.rule] ?? null);
      return write(ws, { memberWrites: true }, async (w) => {
        await w.locks.writable(step.audience);
        await w.setRule(step.audience, RULES[step.rule] ?? null);
      });
    case "merge": {
      const id = `aud_merged_${rules.size}`;
      const filter = unionFilter(rules.get(step.sources[0]) ?? null, rules.get(step.sources[1]) ?? null);
      rules.set(id, filter);
      return write(ws, { memberWrites: true }, async (w) => {
        await w.locks.sources(step.sources);
        await world.createAudience(w.tx, id, filter);
        await w.copyUnion(id, step.sources);
      });
    }
    case "snapshot": {
      const id = `aud_merged_${rules.size}`;
      rules.set(id, null);
      return write(ws, { memberWrites: true }, async (w) => {
        await w.locks.sources([step.source]);
        await world.createAudience(w.tx, id, null);
        await w.snapshot(id, step.source);
      });
    }
    case "delete":
      for (const id of step.ids) existing.delete(id);
      return write(ws, { memberWrites: true }, async (w) => {
        await w.locks.all();
        await w.forgetMembers(await world.deleteMembers(w.tx, step.ids));
      });
    case "tick":
      world.advance(step.days * DAY);
      return world.membership.followClock(ws);
    case "act": {
      const acting = step.ids.filter((id) => existing.has(id));
      if (acting.length === 0) return;
      return write(ws, { memberWrites: true }, async (w) => {
        const stored = await world.storeActivities(w.tx, acting, step);
        // With when they occurred and their properties, the batch decides what it can and skips
        // the members whose counts it leaves alone (activity-batch.ts); bare (amount 50), every
        // member with an activity of a counted type is evaluated again.
        await w.followActivities(step.amount === 50 ? stored.map(({ seq, type }) => ({ seq, type })) : stored);
      });
    }
  }
}

/** An event sink that keeps what the membership module reported, readably. */
const recorder = (idOf: () => (seq: number) => string, seen: Seen): EventSink => ({
  async record(_tx, _ws, entries) {
    for (const c of entries) {
      if (c.type !== "audience.members_changed") continue;
      const read = (set: MembershipChange["entered"]) => membersOf(set).map(idOf()).sort();
      seen.push({ reason: c.reason, audienceId: c.audienceId, entered: read(c.entered), left: read(c.left) });
    }
  },
  committed: () => {},
});
const sorted = (seen: Seen) => [...seen].sort((a, b) => (a.audienceId + a.reason < b.audienceId + b.reason ? -1 : 1));

describe("membership changes reported by the store's statements", () => {
  let store: Store;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ store, close } = await openTestStore());
  });
  afterAll(() => close());

  it("equal the model's after every write, and so do the member counts", async () => {
    let runNo = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 25 }), async (steps) => {
        const ws = `ws_changes_${runNo++}`;
        await workspaceRepo.create(store.db, { id: ws, name: ws });
        await store.transaction(async (tx) => {
          for (const [key, type] of Object.entries(TYPES)) await fieldTypeRepo.declare(tx, ws, key, type);
        });
        const real = realWorld(store, ws);
        const fakes = fakeWorld();
        const model = new RuleModel();
        const rules = [new Map<string, Filter | null>(), new Map<string, Filter | null>()] as const;
        const existing = [new Set<string>(), new Set<string>()] as const;
        for (const id of AUDIENCES) {
          await audienceRepo.create(store.db, { workspaceId: ws, id, name: id });
          await fakes.world.createAudience(undefined, id, null);
          model.audiences.set(id, { rule: null, include: new Set(), exclude: new Set() });
        }
        // After each write: an instant, the model's members of every audience then, and what the
        // write reported (the feed), for the membership record to be read against at the end.
        const past: Past[] = [{ at: await instant(), members: membersNow(model), seen: [] }];
        for (const s of steps) {
          real.seen.length = 0;
          fakes.seen.length = 0;
          const mergedId = `aud_merged_${rules[0].size}`; // the id run() gives a merge or a snapshot
          await run(real.world, ws, s, existing[0], rules[0]);
          await run(fakes.world, "ws", s, existing[1], rules[1]);
          const expected = sorted(model.apply(s, mergedId));
          expect(sorted(real.seen), `store: ${JSON.stringify(s)}`).toEqual(expected);
          expect(sorted(fakes.seen), `fakes: ${JSON.stringify(s)}`).toEqual(expected);
          for (const id of model.audiences.keys()) {
            expect(await real.world.memberCount(id), `member_count of ${id}`).toBe(model.membersOf(id).size);
            expect(await fakes.world.memberCount(id), `fakes' count of ${id}`).toBe(model.membersOf(id).size);
          }
          past.push({ at: await instant(), members: membersNow(model), seen: [...real.seen] });
        }
        await checkRecord(store, ws, past);
      }),
      { numRuns: RUNS, examples: PINNED.map((steps) => [steps]) },
    );
  });
});

interface Past {
  at: number;
  members: Map<string, string[]>;
  seen: Seen;
}

const membersNow = (model: RuleModel) =>
  new Map([...model.audiences.keys()].map((id) => [id, [...model.membersOf(id)].sort()]));

/**
 * An instant between two writes: the last one committed before it, and the next one, started once
 * the clock has passed it by a millisecond, is recorded after it (the record keeps microseconds).
 */
async function instant(): Promise<number> {
  const at = Date.now();
  while (Date.now() <= at + 1) await new Promise((resolve) => setImmediate(resolve));
  return at;
}

/**
 * The membership record read back: every audience's members as of each instant are the model's
 * then (members deleted since named by their ids), and who came and went between two instants is
 * what the write between them reported, with its reasons.
 */
async function checkRecord(store: Store, ws: string, past: Past[]) {
  const asOf = (at: number) => new Date(at + 1);
  for (const [i, { at, members, seen }] of past.entries()) {
    for (const [audienceId, expected] of members) {
      const page = await recordRepo.pageAsOf(store.db, ws, audienceId, {
        before: asOf(at),
        ascending: true,
        limit: 500,
      });
      expect(page.rows.map((row) => row.id).sort(), `${audienceId} as of step ${i}`).toEqual(expected);
      expect(page.total).toBe(expected.length);
      if (i === 0) continue;
      const span = { from: asOf((past[i - 1] as Past).at), to: asOf(at), limit: 500 };
      const changes = await recordRepo.changes(store.db, ws, audienceId, span);
      const reported = seen
        .filter((change) => change.audienceId === audienceId)
        .flatMap((change) => [
          ...change.entered.map((id) => [id, true, change.reason]),
          ...change.left.map((id) => [id, false, change.reason]),
        ]);
      const byId = (a: unknown[], b: unknown[]) => ((a[0] as string) < (b[0] as string) ? -1 : 1);
      expect(
        changes.rows.map((row) => [row.memberId, row.entered, row.reason]).sort(byId),
        `${audienceId}'s changes at step ${i}`,
      ).toEqual(reported.sort(byId));
    }
  }
}

function realWorld(store: Store, ws: string): { world: World; seen: Seen } {
  const names = new Map<number, string>();
  const seen: Seen = [];
  let now = START;
  const membership = storeMembership(store, {
    activityRetentionDays: RETENTION_DAYS,
    clock: () => now,
    events: recorder(() => (seq) => names.get(seq) as string, seen),
  });
  const data = (fields: Data) => ({ email: null, fields, alternativeEmails: [] });
  const world: World = {
    membership,
    idOf: (seq) => names.get(seq) as string,
    async seqsOf(tx, memberIds) {
      return (await memberRepo.findByIds(tx as never, ws, memberIds)).map((row) => row.seq);
    },
    async createMembers(tx, memberIds, fields) {
      for (const id of memberIds) {
        // The member numbers a workspace leaves behind when its members are deleted, in effect.
        await (tx as SqlClient)
          .$executeRaw`UPDATE workspaces SET member_seq = member_seq + ${CHUNK_BITS} WHERE workspace_id = ${ws}`;
        const { seqs } = await memberRepo.insert(tx as never, ws, [{ id, data: data(fields) }], []);
        for (const [id, seq] of seqs) names.set(seq, id);
      }
    },
    async changeMember(tx, id, fields) {
      await memberRepo.updateData(tx as never, ws, [{ id, data: data(fields) }]);
    },
    async storeActivities(tx, memberIds, step) {
      const seqs = (await memberRepo.findByIds(tx as never, ws, memberIds)).map((row) => row.seq);
      const occurredAt = new Date(now - step.daysAgo * DAY);
      const rows = seqs.map((seq) => ({
        seq,
        type: step.type,
        occurredAt,
        id: undefined,
        properties: { amount: step.amount },
      }));
      const outcome = await activityRepo.store(tx as never, ws, rows);
      if (!outcome.written) throw new Error("activities of known members were not stored");
      return outcome.stored;
    },
    async createAudience(tx, id, filter) {
      await audienceRepo.create(tx as never, { workspaceId: ws, id, name: id, filter });
    },
    async deleteMembers(tx, memberIds) {
      return (await memberRepo.delete(tx as never, ws, memberIds)).map((m) => m.seq);
    },
    async memberCount(id) {
      return (await audienceRepo.find(store.db, ws, id))?.memberCount ?? -1;
    },
    advance(ms) {
      now += ms;
    },
  };
  return { world, seen };
}

/** The service on the in-memory fakes: they must agree with the model as the store does. */
function fakeWorld(): { world: World; seen: Seen } {
  const seen: Seen = [];
  const { sets, audiences, membership } = fakeMembership(
    recorder(() => sets.idOf, seen),
    undefined,
    RETENTION_DAYS,
  );
  sets.now = START;
  for (const [key, type] of Object.entries(TYPES)) sets.types.set(key, type);
  const world: World = {
    membership,
    idOf: sets.idOf,
    seqsOf: async (_tx, memberIds) => memberIds.map(sets.seqOf),
    async createMembers(_tx, memberIds, fields) {
      for (const id of memberIds) sets.addMember(id, fields);
    },
    async changeMember(_tx, id, fields) {
      sets.setFields(id, fields);
    },
    async storeActivities(_tx, memberIds, step) {
      const seqs = memberIds.map(sets.seqOf);
      for (const seq of seqs) {
        const done = sets.activities.get(seq) ?? [];
        done.push({ type: step.type, occurredAt: sets.now - step.daysAgo * DAY, properties: { amount: step.amount } });
        sets.activities.set(seq, done);
      }
      const occurredAt = new Date(sets.now - step.daysAgo * DAY);
      return seqs.map((seq) => ({ seq, type: step.type, occurredAt, properties: { amount: step.amount } }));
    },
    async createAudience(_tx, id, filter) {
      audiences.add(id, { filter });
    },
    async deleteMembers(_tx, memberIds) {
      const seqs = memberIds.flatMap((id) => (sets.members.has(id) ? [sets.seqOf(id)] : []));
      for (const id of memberIds) sets.members.delete(id);
      for (const seq of seqs) sets.activities.delete(seq);
      return seqs;
    },
    memberCount: async (id) => sets.of(id).member.size,
    advance(ms) {
      sets.now += ms;
    },
  };
  return { world, seen };
}

// The membership module's statements report who entered and who left each audience (the event
// feed publishes exactly that) and move member_count in the same statement. Random sequences of
// writes run against the real store and against the in-memory fakes of test/unit/fakes; after
// every write both must have reported exactly the changes that a model of the membership rule
//   member ∈ A ⇔ include(A, m) ∨ (rule(A) matches m ∧ ¬exclude(A, m))
// gives (RuleModel below: no code of the service, rules judged by the reference evaluator), and
// every stored count must equal the model's. On the embedded store, and on PostgreSQL when TEST_DATABASE_URL is set. Each member
// gets a chunk of its own, so that a write of a few members reads the audiences' chunks by key and
// one of more members hashes them (membership-sql.ts, readsByKey): both plans are checked.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workspaceRepo } from "../../src/features/admin/workspace-repo.ts";
import { historyRepo } from "../../src/features/insight/history-repo.ts";
import { audienceRepo } from "../../src/features/membership/audience-repo.ts";
import { lockRepo } from "../../src/features/membership/lock-repo.ts";
import { memberRepo } from "../../src/features/membership/member-repo.ts";
import { CHUNK_BITS, type MembershipChange, membersOf } from "../../src/features/membership/member-set.ts";
import { membershipRepo } from "../../src/features/membership/membership-repo.ts";
import {
  createMembershipService,
  type EventSink,
  type MembershipService,
} from "../../src/features/membership/membership-service.ts";
import { fieldTypeRepo } from "../../src/features/membership/rules/field-type-repo.ts";
import { type Filter, unionFilter } from "../../src/features/membership/rules/filter.ts";
import { ruleRepo } from "../../src/features/membership/rules/rule-repo.ts";
import type { Store, Tx } from "../../src/platform/db/database.ts";
import { openTestStore } from "../support/live-server.ts";
import { type PlainMember, referenceMatches } from "../support/reference-filter.ts";
import { fakeMembership } from "../unit/fakes/fake-stores.ts";

const RUNS = 12;
const MEMBERS = ["m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7"];
const AUDIENCES = ["aud_a", "aud_b", "aud_c"];
const COMPANIES = ["Acme", "Beta"];
const RULES: (Filter | null)[] = [
  null,
  { field: "fields.company", op: "eq", value: "acme" },
  { field: "fields.company", op: "eq", value: "beta" },
  {
    any: [
      { field: "id", op: "in", value: ["m1", "m2"] },
      { field: "fields.company", op: "eq", value: "acme" },
    ],
  },
];

type Step =
  | { op: "create"; ids: string[]; company: string }
  | { op: "change"; ids: string[]; company: string }
  | { op: "add" | "remove"; audience: string; ids: string[] }
  | { op: "rule"; audience: string; rule: number }
  | { op: "merge"; sources: [string, string] }
  | { op: "snapshot"; source: string }
  | { op: "delete"; ids: string[] };

const ids = fc.subarray(MEMBERS, { minLength: 1 });
const audience = fc.constantFrom(...AUDIENCES);
const company = fc.constantFrom(...COMPANIES);
const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant("create" as const), ids, company }), weight: 2 },
  // Often more members than readsByKey reads by key.
  {
    arbitrary: fc.record({ op: fc.constant("change" as const), ids: fc.subarray(MEMBERS, { minLength: 3 }), company }),
    weight: 3,
  },
  fc.record({ op: fc.constantFrom("add" as const, "remove" as const), audience, ids }),
  fc.record({ op: fc.constant("rule" as const), audience, rule: fc.integer({ min: 0, max: RULES.length - 1 }) }),
  fc.record({ op: fc.constant("merge" as const), sources: fc.uniqueArray(audience, { minLength: 2, maxLength: 2 }) }),
  fc.record({ op: fc.constant("snapshot" as const), source: audience }),
  fc.record({ op: fc.constant("delete" as const), ids }),
) as fc.Arbitrary<Step>;

type Seen = { reason: string; audienceId: string; entered: string[]; left: string[] }[];

/** A world the steps can run in: the real store, or the model. */
interface World {
  membership: MembershipService;
  /** Member numbers → ids, for reading changes. */
  idOf(seq: number): string;
  seqsOf(tx: unknown, ids: string[]): Promise<number[]>;
  createMembers(tx: unknown, ids: string[], company: string): Promise<void>;
  changeMember(tx: unknown, id: string, company: string): Promise<void>;
  createAudience(tx: unknown, id: string, filter: Filter | null): Promise<void>;
  deleteMembers(tx: unknown, ids: string[]): Promise<number[]>;
  memberCount(id: string): Promise<number>;
}

async function run(world: World, ws: string, step: Step, existing: Set<string>, rules: Map<string, Filter | null>) {
  const write = world.membership.write;
  switch (step.op) {
    case "create": {
      const fresh = step.ids.filter((id) => !existing.has(id));
      for (const id of fresh) existing.add(id);
      return write(ws, { memberWrites: true }, async (w) => {
        await world.createMembers(w.tx, fresh, step.company);
        await w.followMembers(fresh);
      });
    }
    case "change": {
      const changed = step.ids.filter((id) => existing.has(id));
      if (changed.length === 0) return;
      return write(ws, { memberWrites: true }, async (w) => {
        for (const id of changed) await world.changeMember(w.tx, id, step.company);
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
const sorted = (seen: Seen) => [...seen].sort((a, b) => (a.audienceId < b.audienceId ? -1 : 1));

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
        }
      }),
      { numRuns: RUNS },
    );
  });
});

function realWorld(store: Store, ws: string): { world: World; seen: Seen } {
  const names = new Map<number, string>();
  const seen: Seen = [];
  const membership = createMembershipService({
    store,
    locks: lockRepo,
    sets: membershipRepo,
    rules: ruleRepo,
    members: memberRepo,
    audiences: audienceRepo,
    fieldTypes: fieldTypeRepo,
    events: recorder(() => (seq) => names.get(seq) as string, seen),
    history: historyRepo,
  });
  const data = (company: string) => ({ email: null, fields: { company }, alternativeEmails: [] });
  const world: World = {
    membership,
    idOf: (seq) => names.get(seq) as string,
    async seqsOf(tx, memberIds) {
      return (await memberRepo.findByIds(tx as never, ws, memberIds)).map((row) => row.seq);
    },
    async createMembers(tx, memberIds, company) {
      for (const id of memberIds) {
        // The member numbers a workspace leaves behind when its members are deleted, in effect.
        await (tx as Tx)
          .$executeRaw`UPDATE workspaces SET member_seq = member_seq + ${CHUNK_BITS} WHERE workspace_id = ${ws}`;
        const { seqs } = await memberRepo.insert(tx as never, ws, [{ id, data: data(company) }], []);
        for (const [id, seq] of seqs) names.set(seq, id);
      }
    },
    async changeMember(tx, id, company) {
      await memberRepo.updateData(tx as never, ws, [{ id, data: data(company) }]);
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
  };
  return { world, seen };
}

/** The membership rule as DESIGN.md states it, applied step by step; a write's changes are its diffs. */
class RuleModel {
  readonly members = new Map<string, PlainMember>();
  readonly audiences = new Map<string, { rule: Filter | null; include: Set<string>; exclude: Set<string> }>();

  membersOf(audienceId: string): Set<string> {
    const { rule, include, exclude } = this.audiences.get(audienceId) as NonNullable<
      ReturnType<typeof this.audiences.get>
    >;
    const ids = [...this.members.values()]
      .filter((m) => include.has(m.id) || (referenceMatches(rule, m) && !exclude.has(m.id)))
      .map((m) => m.id);
    return new Set(ids);
  }

  /** Applies a step; returns each audience whose members it changed, as the feed must tell it. */
  apply(step: Step, mergedId: string): Seen {
    const before = new Map([...this.audiences.keys()].map((id) => [id, this.membersOf(id)]));
    const reason = this.change(step, mergedId);
    const seen: Seen = [];
    for (const audienceId of this.audiences.keys()) {
      const was = before.get(audienceId) ?? new Set<string>();
      const now = this.membersOf(audienceId);
      const entered = [...now].filter((id) => !was.has(id)).sort();
      const left = [...was].filter((id) => !now.has(id)).sort();
      if (entered.length + left.length > 0) seen.push({ reason, audienceId, entered, left });
    }
    return seen;
  }

  private change(step: Step, mergedId: string): string {
    const member = (id: string, company: string): PlainMember => ({
      id,
      email: null,
      alternativeEmails: [],
      fields: { company },
      createdAt: new Date(0),
    });
    const existing = (ids: string[]) => ids.filter((id) => this.members.has(id));
    switch (step.op) {
      case "create":
        for (const id of step.ids) if (!this.members.has(id)) this.members.set(id, member(id, step.company));
        return "member_changed";
      case "change":
        for (const id of existing(step.ids)) this.members.set(id, member(id, step.company));
        return "member_changed";
      case "add":
      case "remove": {
        const { include, exclude } = this.audiences.get(step.audience) as {
          include: Set<string>;
          exclude: Set<string>;
        };
        const [into, outOf] = step.op === "add" ? [include, exclude] : [exclude, include];
        for (const id of existing(step.ids)) {
          into.add(id);
          outOf.delete(id);
        }
        return "manual";
      }
      case "rule":
        (this.audiences.get(step.audience) as { rule: Filter | null }).rule = RULES[step.rule] ?? null;
        return "rule";
      case "merge": {
        const [a, b] = step.sources.map(
          (id) => this.audiences.get(id) as { rule: Filter | null; include: Set<string> },
        );
        const union = new Set([...this.membersOf(step.sources[0]), ...this.membersOf(step.sources[1])]);
        const rule = unionFilter(a?.rule ?? null, b?.rule ?? null);
        const exclude = [...this.members.values()].filter((m) => referenceMatches(rule, m) && !union.has(m.id));
        this.audiences.set(mergedId, {
          rule,
          include: new Set([...(a?.include ?? []), ...(b?.include ?? [])]),
          exclude: new Set(exclude.map((m) => m.id)),
        });
        return "merge";
      }
      case "snapshot":
        this.audiences.set(mergedId, { rule: null, include: this.membersOf(step.source), exclude: new Set() });
        return "snapshot";
      case "delete":
        for (const id of step.ids) {
          this.members.delete(id);
          for (const { include, exclude } of this.audiences.values()) {
            include.delete(id);
            exclude.delete(id);
          }
        }
        return "member_deleted";
    }
  }
}

/** The service on the in-memory fakes: they must agree with the model as the store does. */
function fakeWorld(): { world: World; seen: Seen } {
  const seen: Seen = [];
  const { sets, audiences, membership } = fakeMembership(recorder(() => sets.idOf, seen));
  const world: World = {
    membership,
    idOf: sets.idOf,
    seqsOf: async (_tx, memberIds) => memberIds.map(sets.seqOf),
    async createMembers(_tx, memberIds, company) {
      for (const id of memberIds) sets.addMember(id, { company });
    },
    async changeMember(_tx, id, company) {
      sets.setFields(id, { company });
    },
    async createAudience(_tx, id, filter) {
      audiences.add(id, { filter });
    },
    async deleteMembers(_tx, memberIds) {
      const seqs = memberIds.flatMap((id) => (sets.members.has(id) ? [sets.seqOf(id)] : []));
      for (const id of memberIds) sets.members.delete(id);
      return seqs;
    },
    memberCount: async (id) => sets.of(id).member.size,
  };
  return { world, seen };
}

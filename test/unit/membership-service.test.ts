import { describe, expect, it } from "vitest";
import type { Prisma } from "../../generated/prisma/client.ts";
import { type MembershipChange, membersOf } from "../../src/features/membership/member-set.ts";
import type { MembershipWriter } from "../../src/features/membership/membership-service.ts";
import { activityRulesJson } from "../../src/features/membership/rules/activity-rule-repo.ts";
import { declaredTypesJson } from "../../src/features/membership/rules/field-type-repo.ts";
import type { Filter } from "../../src/features/membership/rules/filter.ts";
import { ruleMatchesJson } from "../../src/features/membership/rules/rule-repo.ts";
import { candidatesJson } from "../../src/features/membership/upsert/member-candidates-repo.ts";
import { LockOrderError } from "../../src/features/membership/write-locks.ts";
import { SENT_WITH_COMMIT } from "../../src/platform/db/sql-client.ts";
import { fakeMembership, fakeTxStatements } from "./fakes/fake-stores.ts";

const ACME: Filter = { field: "fields.company", op: "eq", value: "acme" };

/** A membership service on fakes, and every change its one reporting function passed on. */
function setUp() {
  const reported: { reason: string; audienceId: string; entered: string[]; left: string[] }[] = [];
  /** Every call of the sink: a record with its event types, or committed. */
  const sink: string[] = [];
  const { sets, audiences, membership, fieldTypes, candidates } = fakeMembership({
    async record(tx, workspaceId, entries) {
      // One batch per write, in its transaction, never an empty one (a statement for nothing).
      // Its statement goes through the transaction, the last before the COMMIT (withCommit).
      await tx.$executeRaw`SELECT 1`;
      expect(fakeTxStatements.pop()).toBe(`${SENT_WITH_COMMIT} SELECT 1`);
      expect(workspaceId).toBe("ws");
      expect(entries.length).toBeGreaterThan(0);
      sink.push(`record ${entries.map((e) => e.type).join(" ")}`);
      for (const entry of entries) if (entry.type === "audience.members_changed") reported.push(readable(entry));
    },
    committed: (workspaceId) => sink.push(`committed ${workspaceId}`),
  });
  const readable = (change: MembershipChange) => ({
    reason: change.reason,
    audienceId: change.audienceId,
    entered: membersOf(change.entered).map(sets.idOf),
    left: membersOf(change.left).map(sets.idOf),
  });
  const write = <T>(memberWrites: boolean, fn: (w: MembershipWriter) => Promise<T>) =>
    membership.workspaceWrite("ws", { memberWrites }, fn);
  return { sets, audiences, membership, reported, readable, write, sink, fieldTypes, candidates };
}

describe("the membership module reports who entered and who left", () => {
  it("adding by hand: the members not yet in entered, reason manual", async () => {
    const { sets, audiences, reported, readable, write } = setUp();
    audiences.add("aud_a");
    const [ada, bob] = [sets.addMember("ada"), sets.addMember("bob")];
    await write(true, async (w) => {
      await w.locks.writable("aud_a");
      expect(readable(await w.include("aud_a", [ada.seq]))).toEqual({
        reason: "manual",
        audienceId: "aud_a",
        entered: ["ada"],
        left: [],
      });
    });
    await write(true, async (w) => {
      await w.locks.writable("aud_a");
      await w.include("aud_a", [ada.seq, bob.seq]);
    });
    expect(reported).toEqual([
      { reason: "manual", audienceId: "aud_a", entered: ["ada"], left: [] },
      { reason: "manual", audienceId: "aud_a", entered: ["bob"], left: [] },
    ]);
  });

  it("removing by hand: members left; a rule cannot bring them back; re-adding brings them back", async () => {
    const { sets, audiences, reported, write } = setUp();
    audiences.add("aud_a");
    sets.addMember("ada", { company: "Acme" });
    sets.addMember("bob", { company: "Acme" });
    const step = (fn: (w: MembershipWriter) => Promise<unknown>) =>
      write(true, async (w) => {
        await w.locks.writable("aud_a");
        await fn(w);
      });
    await step((w) => w.setRule("aud_a", ACME));
    await step((w) => w.exclude("aud_a", ["ada", "nobody"]));
    await step((w) => w.setRule("aud_a", ACME));
    await step((w) => w.include("aud_a", [sets.seqOf("ada")]));
    expect(reported).toEqual([
      { reason: "rule", audienceId: "aud_a", entered: ["ada", "bob"], left: [] },
      { reason: "manual", audienceId: "aud_a", entered: [], left: ["ada"] },
      { reason: "manual", audienceId: "aud_a", entered: ["ada"], left: [] },
    ]);
    expect(sets.memberIds("aud_a")).toEqual(["ada", "bob"]);
  });

  it("a rule change: who matches now entered, who no longer does left; added by hand stays", async () => {
    const { sets, audiences, reported, write } = setUp();
    audiences.add("aud_a");
    sets.addMember("ada", { company: "Acme" });
    sets.addMember("bob", { company: "Beta" });
    sets.addMember("cy", { company: "Beta" });
    const step = (fn: (w: MembershipWriter) => Promise<unknown>) =>
      write(true, async (w) => {
        await w.locks.writable("aud_a");
        await fn(w);
      });
    await step((w) => w.include("aud_a", [sets.seqOf("cy")]));
    await step((w) => w.setRule("aud_a", ACME));
    await step((w) => w.setRule("aud_a", { field: "fields.company", op: "eq", value: "beta" }));
    await step((w) => w.setRule("aud_a", null));
    expect(reported).toEqual([
      { reason: "manual", audienceId: "aud_a", entered: ["cy"], left: [] },
      { reason: "rule", audienceId: "aud_a", entered: ["ada"], left: [] },
      { reason: "rule", audienceId: "aud_a", entered: ["bob"], left: ["ada"] },
      { reason: "rule", audienceId: "aud_a", entered: [], left: ["bob"] },
    ]);
    expect(audiences.rows.get("aud_a")?.filter).toBeNull();
  });

  it("member data changes: each rule-based audience reports its own entries and exits, reason member_changed", async () => {
    const { sets, audiences, reported, write } = setUp();
    audiences.add("aud_acme", { filter: ACME });
    audiences.add("aud_beta", { filter: { field: "fields.company", op: "eq", value: "beta" } });
    audiences.add("aud_manual");
    sets.addMember("ada", { company: "Acme" });
    await write(true, (w) => w.followMembers(["ada"]));
    sets.setFields("ada", { company: "Beta" });
    await write(true, (w) => w.followMembers(["ada"]));
    expect(reported).toEqual([
      { reason: "member_changed", audienceId: "aud_acme", entered: ["ada"], left: [] },
      { reason: "member_changed", audienceId: "aud_acme", entered: [], left: ["ada"] },
      { reason: "member_changed", audienceId: "aud_beta", entered: ["ada"], left: [] },
    ]);
  });

  it("member data changes lock and write only the audiences whose rule now matches differently", async () => {
    const { sets, audiences, reported, write } = setUp();
    audiences.add("aud_acme", { filter: ACME });
    audiences.add("aud_beta", { filter: { field: "fields.company", op: "eq", value: "beta" } });
    sets.addMember("ada", { company: "Acme" });
    await write(true, (w) => w.followMembers(["ada"]));
    audiences.taken.length = 0;
    sets.setFields("ada", { company: "Acme", role: "Engineer" });
    expect(await write(true, (w) => w.followMembers(["ada"]))).toEqual([]);
    expect(audiences.taken).toEqual(["members"]);
    sets.setFields("ada", { company: "Beta" });
    await write(true, (w) => w.followMembers(["ada"]));
    expect(audiences.taken).toEqual(["members", "members", "update aud_acme", "update aud_beta"]);
    expect(reported.map((r) => [r.audienceId, r.entered, r.left])).toEqual([
      ["aud_acme", ["ada"], []],
      ["aud_acme", [], ["ada"]],
      ["aud_beta", ["ada"], []],
    ]);
  });

  it("merging: the new audience's members all entered, reason merge; the sources report nothing", async () => {
    const { sets, audiences, reported, write } = setUp();
    audiences.add("aud_a");
    audiences.add("aud_b");
    const [ada, bob] = [sets.addMember("ada"), sets.addMember("bob")];
    await write(true, async (w) => {
      await w.locks.sources(["aud_a", "aud_b"]);
      await w.copyUnion("aud_new", ["aud_a", "aud_b"]);
    });
    await write(true, async (w) => {
      await w.locks.audience("aud_a");
      await w.include("aud_a", [ada.seq]);
    });
    await write(true, async (w) => {
      await w.locks.sources(["aud_a", "aud_b"]);
      await w.locks.audience("aud_b");
      await w.include("aud_b", [bob.seq]);
      await w.copyUnion("aud_both", ["aud_a", "aud_b"]);
    });
    expect(reported).toEqual([
      { reason: "manual", audienceId: "aud_a", entered: ["ada"], left: [] },
      { reason: "manual", audienceId: "aud_b", entered: ["bob"], left: [] },
      { reason: "merge", audienceId: "aud_both", entered: ["ada", "bob"], left: [] },
    ]);
  });

  it("snapshotting: the copy's members all entered, reason snapshot, added by hand; the source reports nothing", async () => {
    const { sets, audiences, reported, write } = setUp();
    audiences.add("aud_a", { filter: ACME });
    sets.addMember("ada", { company: "Acme" });
    sets.addMember("bob", { company: "Acme" });
    const cy = sets.addMember("cy", { company: "Beta" });
    await write(true, async (w) => {
      await w.locks.writable("aud_a");
      await w.setRule("aud_a", ACME);
      await w.exclude("aud_a", ["bob"]);
      await w.include("aud_a", [cy.seq]);
    });
    reported.length = 0;
    const change = await write(true, async (w) => {
      await w.locks.sources(["aud_a"]);
      return w.snapshot("aud_copy", "aud_a");
    });
    expect(change.reason).toBe("snapshot");
    expect(reported).toEqual([{ reason: "snapshot", audienceId: "aud_copy", entered: ["ada", "cy"], left: [] }]);
    const copy = sets.of("aud_copy");
    expect([...copy.include].map(sets.idOf).sort()).toEqual(["ada", "cy"]);
    expect([copy.match.size, copy.exclude.size]).toEqual([0, 0]);
    expect(sets.memberIds("aud_a")).toEqual(["ada", "cy"]);
  });

  it("deleting members: they left every audience that held them, reason member_deleted", async () => {
    const { sets, audiences, reported, write } = setUp();
    audiences.add("aud_a");
    audiences.add("aud_b", { isArchived: true });
    const [ada, bob] = [sets.addMember("ada"), sets.addMember("bob")];
    sets.of("aud_a").include.add(ada.seq);
    sets.of("aud_a").member.add(ada.seq);
    sets.of("aud_b").include.add(bob.seq);
    sets.of("aud_b").member.add(bob.seq);
    await write(true, async (w) => {
      await w.locks.all();
      await w.forgetMembers([ada.seq, bob.seq]);
    });
    expect(reported).toEqual([
      { reason: "member_deleted", audienceId: "aud_a", entered: [], left: ["ada"] },
      { reason: "member_deleted", audienceId: "aud_b", entered: [], left: ["bob"] },
    ]);
  });

  it("reports nothing when nothing changed", async () => {
    const { sets, audiences, reported, write, sink } = setUp();
    audiences.add("aud_a", { filter: ACME });
    sets.addMember("ada", { company: "Beta" });
    const change = await write(true, async (w) => {
      await w.locks.writable("aud_a");
      await w.followMembers(["ada"]);
      return w.exclude("aud_a", ["ada"]);
    });
    expect(change).toStrictEqual({ audienceId: "aud_a", reason: "manual", entered: new Map(), left: new Map() });
    expect(reported).toEqual([]);
    expect(sink).toEqual(["committed ws"]);
  });

  it("one member entering and another leaving the same rule audience in one write: both reported", async () => {
    const { sets, audiences, reported, write } = setUp();
    audiences.add("aud_acme", { filter: ACME });
    sets.addMember("ada", { company: "Acme" });
    sets.addMember("bob", { company: "Beta" });
    await write(true, (w) => w.followMembers(["ada", "bob"]));
    sets.setFields("ada", { company: "Beta" });
    sets.setFields("bob", { company: "Acme" });
    await write(true, (w) => w.followMembers(["ada", "bob"], []));
    expect(reported).toEqual([
      { reason: "member_changed", audienceId: "aud_acme", entered: ["ada"], left: [] },
      { reason: "member_changed", audienceId: "aud_acme", entered: ["bob"], left: ["ada"] },
    ]);
    expect(sets.memberIds("aud_acme")).toEqual(["bob"]);
  });

  it("follows members it is given as they stand without reading them again, and reads the others", async () => {
    const { sets, audiences, reported, write } = setUp();
    audiences.add("aud_acme", { filter: ACME });
    const ada = sets.addMember("ada", { company: "Acme" });
    sets.addMember("bob", { company: "Acme" });
    const read: (string[] | undefined)[] = [];
    const ruleMatches = sets.ruleRepo.ruleMatches;
    // The others are read with the rules, in the same statement (foldedOf), not on their own.
    sets.ruleRepo.ruleMatches = (tx, ws, ids, asked) => {
      read.push(asked?.foldedOf);
      return ruleMatches(tx, ws, ids, asked);
    };
    const folded = sets.memberReads.folded;
    sets.memberReads.folded = (tx, ws, ids) => {
      read.push(ids);
      return folded(tx, ws, ids);
    };
    await write(true, (w) => w.followMembers(["ada", "bob"], [ada]));
    expect(read).toEqual([["bob"]]);
    expect(reported).toEqual([{ reason: "member_changed", audienceId: "aud_acme", entered: ["ada", "bob"], left: [] }]);
  });

  it("reads the audiences that name others once per write, and follows a rule set earlier in the same write", async () => {
    const { sets, audiences, reported, write, fieldTypes } = setUp();
    const inA: Filter = { field: "audience", op: "in", value: "aud_a" };
    audiences.add("aud_a");
    audiences.add("aud_b");
    audiences.add("aud_c", { filter: inA });
    const [ada, bob] = [sets.addMember("ada"), sets.addMember("bob")];
    let reads = 0;
    const read = sets.ruleRepo.namingAudiences;
    sets.ruleRepo.namingAudiences = (tx, ws) => {
      reads++;
      return read(tx, ws);
    };
    let typeReads = 0;
    const types = fieldTypes.types;
    fieldTypes.types = (tx, ws) => {
      typeReads++;
      return types(tx, ws);
    };
    const c = { id: "aud_c", filter: inA };
    const naming = async (w: MembershipWriter) => (await w.namingAudiences()).map(({ id, filter }) => ({ id, filter }));
    await write(true, async (w) => {
      await w.locks.writable("aud_a");
      await w.locks.writable("aud_b");
      expect(await naming(w)).toEqual([c]);
      // The types the caller read are the rule's: not read again.
      await w.setRule("aud_b", inA, new Map());
      expect(typeReads).toBe(0);
      expect(await naming(w)).toEqual([c, { id: "aud_b", filter: inA }]);
      await w.include("aud_a", [ada.seq]);
      const before = typeReads;
      await w.setRule("aud_b", ACME);
      expect(typeReads - before).toBe(1);
      expect(await naming(w)).toEqual([c]);
      await w.setRule("aud_b", null);
      expect(await naming(w)).toEqual([c]);
      await w.include("aud_a", [bob.seq]);
    });
    expect(reads).toBe(1);
    // What the write's commit changed: ada entered aud_b by its first rule and left it by its
    // second, so aud_b tells of nothing.
    expect(reported).toEqual([
      { reason: "manual", audienceId: "aud_a", entered: ["ada", "bob"], left: [] },
      { reason: "dependency", audienceId: "aud_c", entered: ["ada", "bob"], left: [] },
    ]);
  });

  it("records a write's other events with its membership changes, in order, in one batch", async () => {
    const { sets, audiences, write, sink } = setUp();
    audiences.add("aud_a");
    const ada = sets.addMember("ada");
    await write(true, async (w) => {
      await w.locks.writable("aud_a");
      w.publish({ type: "audience.renamed", audienceId: "aud_a", name: "A" } as never);
      await w.include("aud_a", [ada.seq]);
    });
    expect(sink).toEqual(["record audience.renamed audience.members_changed", "committed ws"]);
  });

  it("computes outdated rules once at start, with reason rule", async () => {
    const { sets, audiences, membership, reported } = setUp();
    audiences.rows.set("aud_old", { ...audiences.add("aud_old", { filter: ACME }), ruleOutdated: true });
    sets.addMember("ada", { company: "Acme" });
    expect(await membership.refreshOutdatedRules()).toBe(1);
    expect(await membership.refreshOutdatedRules()).toBe(0);
    expect(reported).toEqual([{ reason: "rule", audienceId: "aud_old", entered: ["ada"], left: [] }]);
  });

  it("skips an outdated rule that another process refreshed between the listing and the lock", async () => {
    const { sets, audiences, membership, reported } = setUp();
    audiences.add("aud_old", { filter: ACME });
    sets.addMember("ada", { company: "Acme" });
    audiences.repo.listRuleOutdated = async () => [{ workspaceId: "ws", id: "aud_old" }];
    expect(await membership.refreshOutdatedRules()).toBe(0);
    expect(audiences.taken).toEqual(["members"]);
    expect(reported).toEqual([]);
    expect(sets.memberIds("aud_old")).toEqual([]);
  });
});

describe("the membership module refuses writes without their locks", () => {
  // Each with every lock but the one it names (the member lock, or a share lock for an update one).
  const writes: [string, boolean, (w: MembershipWriter) => Promise<unknown>, string][] = [
    [
      "adding without the audience's lock",
      true,
      (w) => w.include("aud_a", [0]),
      "adding members needs audience aud_a locked",
    ],
    [
      "adding to a source locked to be read",
      true,
      async (w) => {
        await w.locks.sources(["aud_a"]);
        return w.include("aud_a", [0]);
      },
      "adding members needs audience aud_a locked",
    ],
    [
      "removing from a source locked to be read",
      false,
      async (w) => {
        await w.locks.sources(["aud_a"]);
        return w.exclude("aud_a", ["ada"]);
      },
      "removing members needs audience aud_a locked",
    ],
    [
      "setting the rule of a source locked to be read",
      true,
      async (w) => {
        await w.locks.sources(["aud_a"]);
        return w.setRule("aud_a", null);
      },
      "setting a rule needs audience aud_a locked",
    ],
    [
      "adding without the member lock",
      false,
      async (w) => {
        await w.locks.writable("aud_a");
        return w.include("aud_a", [0]);
      },
      "adding members needs the workspace's member lock",
    ],
    [
      "removing without the member lock",
      false,
      async (w) => {
        await w.locks.writable("aud_a");
        return w.exclude("aud_a", ["ada"]);
      },
      "removing members needs the workspace's member lock",
    ],
    [
      "merging a source not locked",
      true,
      (w) => w.copyUnion("aud_new", ["aud_a"]),
      "merging needs audience aud_a locked",
    ],
    [
      "merging without the member lock",
      false,
      async (w) => {
        await w.locks.sources(["aud_a"]);
        return w.copyUnion("aud_new", ["aud_a"]);
      },
      "merging needs the workspace's member lock",
    ],
    [
      "snapshotting a source not locked",
      true,
      (w) => w.snapshot("aud_new", "aud_a"),
      "snapshotting needs audience aud_a locked",
    ],
    [
      "snapshotting without the member lock",
      false,
      async (w) => {
        await w.locks.sources(["aud_a"]);
        return w.snapshot("aud_new", "aud_a");
      },
      "snapshotting needs the workspace's member lock",
    ],
    [
      "following members without the member lock",
      false,
      (w) => w.followMembers(["ada"]),
      "following member changes needs the workspace's member lock",
    ],
    [
      "deleting without the member lock",
      false,
      (w) => w.forgetMembers([0]),
      "deleting members needs the workspace's member lock",
    ],
    [
      "deleting without every audience locked",
      true,
      (w) => w.forgetMembers([0]),
      "deleting members needs every audience locked",
    ],
  ];
  it.each(writes)("%s", async (_case, memberWrites, act, message) => {
    const { audiences, reported, write } = setUp();
    audiences.add("aud_a");
    await expect(write(memberWrites, act)).rejects.toThrow(new LockOrderError(message));
    expect(reported).toEqual([]);
  });

  it("with lockWithFirstRead, the member lock goes with reading members: nothing may be sent before it", async () => {
    const { audiences, sets, membership } = setUp();
    audiences.add("aud_acme", { filter: ACME });
    sets.addMember("ada", { company: "Acme" });
    const first = { memberWrites: true, lockWithFirstRead: true } as const;
    await expect(membership.workspaceWrite("ws", first, async (w) => w.tx)).rejects.toThrow(
      new LockOrderError("the member lock goes with the write's first read, before any statement"),
    );
    await expect(membership.workspaceWrite("ws", first, (w) => w.include("aud_acme", []))).rejects.toThrow(
      "adding members needs audience aud_acme locked",
    );
    expect(audiences.taken).toEqual([]);
    // The fakes answer no read with the lock: it is read again, under the lock.
    const read = await membership.workspaceWrite("ws", first, async (w) => {
      const members = await w.readMembers(["ada"]);
      expect(w.tx).toBeDefined();
      return members;
    });
    expect([audiences.taken, read.rules.map((rule) => [rule.id, rule.matched])]).toEqual([
      ["members"],
      [["aud_acme", []]],
    ]);
  });

  it("with lockWithFirstRead, reading members takes the database's answer of the lock's statement as it is", async () => {
    const { audiences, sets, membership } = setUp();
    let asked = 0;
    sets.ruleRepo.ruleMatches = async () => {
      asked++;
      throw new Error("read again");
    };
    const answer = {
      rules: [["aud_acme", ACME, [0]]],
      types: { score: "number" },
      held: [["aud_a", "include", [0]]],
      rows: [
        { id: "ada", createdAt: "2026-11-21T09:41:00.000Z", email: null, fields: {}, alternativeEmails: [], seq: 0 },
      ],
      folded: null,
    };
    const sent: Prisma.Sql[] = [];
    audiences.locks.memberWritesReading = async (_tx, _ws, alongside) => {
      sent.push(alongside);
      return JSON.stringify(answer);
    };
    const read = await membership.workspaceWrite("ws", { memberWrites: true, lockWithFirstRead: true }, (w) =>
      w.readMembers(["ada"]),
    );
    // The lock's statement reads what ruleMatches reads: the members and the evaluation's rules.
    expect(sent).toEqual([ruleMatchesJson("ws", ["ada"], { rowsOf: ["ada"] })]);
    expect(read).toEqual({
      types: new Map([["score", "number"]]),
      rules: [{ id: "aud_acme", filter: ACME, matched: [0] }],
      held: new Map([["aud_a", { include: [0], exclude: [], member: [] }]]),
      rows: [{ ...answer.rows[0], createdAt: new Date("2026-11-21T09:41:00.000Z") }],
      folded: [],
    });
    expect(asked).toBe(0);
  });

  it("reads the rules that follow activities once per write, with the member lock when asked", async () => {
    const { audiences, sets, membership } = setUp();
    const counting: Filter = { activity: "order.placed" } as Filter;
    audiences.add("aud_orders", { filter: counting });
    const ada = sets.addMember("ada");
    let reads = 0;
    const activityRules = sets.activityRepo.activityRules;
    sets.activityRepo.activityRules = (tx, ws) => {
      reads++;
      return activityRules(tx, ws);
    };
    const stored = [{ seq: ada.seq, type: "order.placed", occurredAt: new Date(sets.now), properties: {} }];
    const first = { memberWrites: true, lockWithFirstRead: true } as const;
    // The fakes answer no read with the lock: read again under it, and not a third time.
    await membership.workspaceWrite("ws", first, async (w) => {
      await w.readActivityRules();
      await w.followActivities(stored);
    });
    expect([audiences.taken, reads]).toEqual([["members", "update aud_orders"], 1]);
    // The lock's statement answers them: followActivities takes them as read.
    const sent: Prisma.Sql[] = [];
    audiences.locks.memberWritesReading = async (_tx, _ws, alongside) => {
      sent.push(alongside);
      return JSON.stringify([{ id: "aud_orders", filter: counting, counts: true, names: false }]);
    };
    await membership.workspaceWrite("ws", first, async (w) => {
      await w.readActivityRules();
      await w.followActivities(stored);
    });
    expect(reads).toBe(1);
    expect(sent).toEqual([activityRulesJson("ws")]);
    expect(sets.memberIds("aud_orders")).toEqual(["ada"]);
    // Without the member lock, nothing is read.
    await expect(
      membership.workspaceWrite("ws", { memberWrites: false }, (w) => w.readActivityRules()),
    ).rejects.toThrow(new LockOrderError("reading the rules that follow activities needs the workspace's member lock"));
    expect(reads).toBe(1);
  });

  it("reads an upsert's candidates under the member lock; with lockWithFirstRead, as the lock's statement read them", async () => {
    const { sets, audiences, membership, candidates } = setUp();
    sets.addMember("ada");
    const asked: [string[], string[]][] = [];
    const read = candidates.candidates;
    candidates.candidates = (tx, ws, ids, keys) => {
      asked.push([ids, keys]);
      return read(tx, ws, ids, keys);
    };
    const first = { memberWrites: true, lockWithFirstRead: true } as const;
    const ids = (found: { rows: { id: string }[] }) => found.rows.map((row) => row.id);
    // The fakes answer no read with the lock: read again under it.
    const again = await membership.workspaceWrite("ws", first, (w) => w.readCandidates(["ada", "bob"], ["a@x.io"]));
    expect([ids(again), audiences.taken, asked]).toEqual([["ada"], ["members"], [[["ada", "bob"], ["a@x.io"]]]]);
    // The lock's statement answers them: not read again.
    const answer = {
      owners: [["a@x.io", "ada"]],
      rows: [
        {
          id: "ada",
          createdAt: "2026-11-21T09:41:00.000Z",
          email: "a@x.io",
          fields: {},
          alternativeEmails: [],
          seq: 0,
        },
      ],
      types: { score: "number" },
    };
    const sent: Prisma.Sql[] = [];
    audiences.locks.memberWritesReading = async (_tx, _ws, alongside) => {
      sent.push(alongside);
      return JSON.stringify(answer);
    };
    const answered = await membership.workspaceWrite("ws", first, (w) => w.readCandidates(["ada"], ["a@x.io"]));
    expect(sent).toEqual([candidatesJson("ws", ["ada"], ["a@x.io"])]);
    expect(answered).toEqual({
      owners: new Map([["a@x.io", "ada"]]),
      rows: [{ ...answer.rows[0], createdAt: new Date("2026-11-21T09:41:00.000Z") }],
      types: new Map([["score", "number"]]),
    });
    expect(asked.length).toBe(1);
    // Without the member lock, nothing is read.
    await expect(
      membership.workspaceWrite("ws", { memberWrites: false }, (w) => w.readCandidates(["ada"], [])),
    ).rejects.toThrow(new LockOrderError("reading an upsert's candidates needs the workspace's member lock"));
    expect(asked.length).toBe(1);
  });

  it("reads the field types under the member lock; with lockWithFirstRead, as the lock's statement read them", async () => {
    const { sets, audiences, membership, fieldTypes } = setUp();
    sets.types.set("score", "number");
    let reads = 0;
    const types = fieldTypes.types;
    fieldTypes.types = (tx, ws) => {
      reads++;
      return types(tx, ws);
    };
    const first = { memberWrites: true, lockWithFirstRead: true } as const;
    // The fakes answer no read with the lock: read again under it.
    const again = await membership.workspaceWrite("ws", first, (w) => w.readFieldTypes());
    expect([again, audiences.taken, reads]).toEqual([new Map([["score", "number"]]), ["members"], 1]);
    // The lock's statement answers them: not read again.
    const sent: Prisma.Sql[] = [];
    audiences.locks.memberWritesReading = async (_tx, _ws, alongside) => {
      sent.push(alongside);
      return JSON.stringify({ score: "number", born: "date" });
    };
    const answered = await membership.workspaceWrite("ws", first, (w) => w.readFieldTypes());
    expect(sent).toEqual([declaredTypesJson("ws")]);
    expect([answered, reads]).toEqual([
      new Map([
        ["score", "number"],
        ["born", "date"],
      ]),
      1,
    ]);
    // Under a member lock taken before: read on their own.
    expect(await membership.workspaceWrite("ws", { memberWrites: true }, (w) => w.readFieldTypes())).toEqual(
      new Map([["score", "number"]]),
    );
    expect(reads).toBe(2);
    // Without the member lock, nothing is read.
    await expect(membership.workspaceWrite("ws", { memberWrites: false }, (w) => w.readFieldTypes())).rejects.toThrow(
      new LockOrderError("reading the field types needs the workspace's member lock"),
    );
    expect(reads).toBe(2);
  });

  it("with lockWithFirstRead, an audience locked by hand takes the member lock in its statement", async () => {
    const { audiences, membership } = setUp();
    audiences.add("aud_a");
    audiences.add("aud_b");
    await membership.workspaceWrite("ws", { memberWrites: true, lockWithFirstRead: true }, async (w) => {
      await w.writable("aud_b");
      // Now under the member lock: another audience, locked as usual.
      await w.writable("aud_a");
    });
    expect(audiences.taken).toEqual(["members", "update aud_b", "update aud_a"]);
  });

  it("a change that moves nobody returns the audience with no one entered or left, and its reason", async () => {
    const { audiences, sets, write } = setUp();
    audiences.add("aud_a");
    audiences.add("aud_b");
    const ada = sets.addMember("ada");
    const nothing = (audienceId: string, reason: string) => ({
      audienceId,
      reason,
      entered: new Map(),
      left: new Map(),
    });
    await write(true, async (w) => {
      await w.locks.sources(["aud_a", "aud_b"]);
      expect(await w.copyUnion("aud_c", ["aud_a", "aud_b"])).toStrictEqual(nothing("aud_c", "merge"));
      expect(await w.snapshot("aud_d", "aud_a")).toStrictEqual(nothing("aud_d", "snapshot"));
      await w.locks.writable("aud_a");
      expect(await w.include("aud_a", [])).toStrictEqual(nothing("aud_a", "manual"));
      expect(await w.setRule("aud_a", null)).toStrictEqual(nothing("aud_a", "rule"));
      await w.include("aud_a", [ada.seq]);
      expect(await w.include("aud_a", [ada.seq])).toStrictEqual(nothing("aud_a", "manual"));
    });
  });

  it("following members makes no statement for no members, no rule audiences, or no audience moved", async () => {
    const { audiences, sets, write } = setUp();
    const calls: string[] = [];
    const count =
      <A extends unknown[], R>(name: string, fn: (...args: A) => R) =>
      (...args: A) => {
        calls.push(name);
        return fn(...args);
      };
    sets.ruleRepo.ruleMatches = count("ruleMatches", sets.ruleRepo.ruleMatches);
    sets.repo.applyMatches = count("applyMatches", sets.repo.applyMatches);
    sets.memberReads.folded = count("folded", sets.memberReads.folded);
    sets.addMember("ada", { company: "Acme" });
    expect(await write(true, (w) => w.followMembers([]))).toEqual([]);
    expect(await write(true, (w) => w.followMembers(["ada"]))).toEqual([]);
    audiences.add("aud_beta", { filter: { field: "fields.company", op: "eq", value: "beta" } });
    expect(await write(true, (w) => w.followMembers(["ada"]))).toEqual([]);
    // The member is read with the rules (ruleMatches' foldedOf), in one statement.
    expect(calls).toEqual(["ruleMatches", "ruleMatches"]);
  });

  it("setting a rule needs the member lock even with the audience locked", async () => {
    const { audiences, write } = setUp();
    audiences.add("aud_a");
    const setRule = write(false, async (w) => {
      await w.locks.writable("aud_a");
      return w.setRule("aud_a", ACME);
    });
    await expect(setRule).rejects.toThrow(new LockOrderError("setting a rule needs the workspace's member lock"));
    expect(audiences.rows.get("aud_a")?.filter).toBeNull();
  });
});

describe("the size history", () => {
  it("gets one record per write: each changed audience's entered and left, net over the write", async () => {
    const records: { workspaceId: string; changes: unknown[] }[] = [];
    const { sets, audiences, membership } = fakeMembership(
      { record: async () => {}, committed: () => {} },
      {
        async record(tx, workspaceId, changes) {
          // Its statement goes through the transaction, the last before the COMMIT (withCommit).
          await tx.$executeRaw`SELECT 1`;
          expect(fakeTxStatements.pop()).toBe(`${SENT_WITH_COMMIT} SELECT 1`);
          records.push({ workspaceId, changes });
        },
      },
    );
    audiences.add("aud_a");
    audiences.add("aud_b");
    const [ada, bob] = [sets.addMember("ada"), sets.addMember("bob")];
    await membership.workspaceWrite("ws", { memberWrites: true }, async (w) => {
      await w.locks.writable("aud_a");
      await w.locks.writable("aud_b");
      await w.include("aud_a", [ada.seq, bob.seq]);
      await w.exclude("aud_a", ["ada"]);
      await w.include("aud_a", [ada.seq]);
      await w.include("aud_b", [bob.seq]);
    });
    // A write that changes no members records nothing.
    await membership.workspaceWrite("ws", { memberWrites: false }, async (w) => {
      w.publish({ type: "audience.archived", audienceId: "aud_a" });
    });
    expect(records).toEqual([
      {
        workspaceId: "ws",
        changes: [
          // ada entered, left and entered again: she entered, once.
          { audienceId: "aud_a", entered: 2, left: 0 },
          { audienceId: "aud_b", entered: 1, left: 0 },
        ],
      },
    ]);
  });
});

describe("the membership record", () => {
  it("gets each write's netted changes once, and gives the size history its instant", async () => {
    const recorded: { workspaceId: string; changes: unknown[] }[] = [];
    const sizes: { at: Date; changes: unknown[] }[] = [];
    const instant = new Date("2026-11-03T09:00:00.123Z");
    const { sets, audiences, membership } = fakeMembership(
      { record: async () => {}, committed: () => {} },
      { record: async (_tx, _ws, changes, at) => void sizes.push({ at, changes }) },
      undefined,
      {
        async record(tx, workspaceId, entries) {
          // Its statement goes through the transaction, the last before the COMMIT (withCommit).
          await tx.$executeRaw`SELECT 1`;
          expect(fakeTxStatements.pop()).toBe(`${SENT_WITH_COMMIT} SELECT 1`);
          recorded.push({
            workspaceId,
            changes: entries.flatMap((e) =>
              e.type === "audience.members_changed"
                ? [[e.audienceId, e.reason, membersOf(e.entered).map(sets.idOf), membersOf(e.left).map(sets.idOf)]]
                : [e.type],
            ),
          });
          return instant;
        },
      },
    );
    audiences.add("aud_a");
    const [ada, bob] = [sets.addMember("ada"), sets.addMember("bob")];
    await membership.workspaceWrite("ws", { memberWrites: true }, async (w) => {
      await w.locks.writable("aud_a");
      w.publish({ type: "audience.renamed", audienceId: "aud_a", name: "A" } as never);
      await w.include("aud_a", [ada.seq, bob.seq]);
      await w.exclude("aud_a", ["ada"]);
    });
    // A write that changes no members records nothing.
    await membership.workspaceWrite("ws", { memberWrites: false }, async (w) => {
      w.publish({ type: "audience.archived", audienceId: "aud_a" });
    });
    await membership.workspaceWrite("ws", { memberWrites: true }, async (w) => {
      await w.locks.writable("aud_a");
      await w.exclude("aud_a", ["bob"]);
    });
    // ada entered and left in one write: no commit held her membership, so the record has only bob.
    expect(recorded).toEqual([
      { workspaceId: "ws", changes: ["audience.renamed", ["aud_a", "manual", ["bob"], []]] },
      { workspaceId: "ws", changes: [["aud_a", "manual", [], ["bob"]]] },
    ]);
    expect(sizes).toEqual([
      { at: instant, changes: [{ audienceId: "aud_a", entered: 1, left: 0 }] },
      { at: instant, changes: [{ audienceId: "aud_a", entered: 0, left: 1 }] },
    ]);
  });
});

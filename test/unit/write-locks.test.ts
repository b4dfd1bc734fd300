import { describe, expect, it } from "vitest";
import { Prisma } from "../../generated/prisma/client.ts";
import { createWriteLocks, LockOrderError } from "../../src/features/membership/write-locks.ts";
import { FakeAudiences, fakeTx } from "./fakes/fake-stores.ts";

function setUp() {
  const audiences = new FakeAudiences();
  for (const id of ["aud_b", "aud_a", "aud_c"]) audiences.add(id);
  audiences.add("aud_old", { isArchived: true });
  audiences.add("aud_rule", { filter: { field: "id", op: "eq", value: "x" } });
  return { audiences, locks: createWriteLocks(audiences.locks, fakeTx, "ws") };
}

describe("write locks", () => {
  it("take the member lock first, then audiences in id order", async () => {
    const { audiences, locks } = setUp();
    await locks.members();
    await locks.sources(["aud_c", "aud_a"]);
    await locks.writable("aud_b");
    await locks.following(["aud_rule", "aud_b"]);
    expect(audiences.taken).toEqual(["members", "share aud_a", "share aud_c", "update aud_b", "update aud_rule"]);
    expect(locks.holds("aud_a", "share")).toBe(true);
    expect(locks.holds("aud_a", "update")).toBe(false);
    expect(locks.holds("aud_b", "share")).toBe(true);
  });

  it("refuse the member lock after an audience lock, which could deadlock", async () => {
    const { audiences, locks } = setUp();
    await locks.writable("aud_a");
    await expect(locks.members()).rejects.toThrow(
      new LockOrderError("the member lock is taken before any audience lock"),
    );
    expect(new LockOrderError("x").name).toBe("LockOrderError");
    expect(audiences.taken).toEqual(["update aud_a"]);
  });

  it("refuse a second audience without the member lock, but allow the same one again", async () => {
    const { audiences, locks } = setUp();
    await locks.writable("aud_a");
    await locks.writable("aud_a");
    await expect(locks.writable("aud_b")).rejects.toBeInstanceOf(LockOrderError);
    await expect(locks.sources(["aud_a", "aud_c"])).rejects.toBeInstanceOf(LockOrderError);
    await expect(locks.following(["aud_rule"])).rejects.toThrow(
      "locking the audiences that follow members needs the workspace's member lock",
    );
    await expect(locks.all()).rejects.toThrow("locking every audience needs the workspace's member lock");
    expect(audiences.taken).toEqual(["update aud_a", "update aud_a"]);
  });

  it("take the member lock with a read, once and before any audience lock", async () => {
    const { audiences, locks } = setUp();
    expect(await locks.membersReading(Prisma.sql`(SELECT 'x')`)).toBeUndefined();
    expect(locks.holdsMembers()).toBe(true);
    await expect(locks.membersReading(Prisma.empty)).rejects.toThrow(
      new LockOrderError("the member lock is taken once"),
    );
    await locks.members();
    const after = setUp();
    await after.locks.writable("aud_a");
    await expect(after.locks.membersReading(Prisma.empty)).rejects.toThrow(
      "the member lock is taken before any audience lock",
    );
    expect([audiences.taken, after.audiences.taken]).toEqual([["members"], ["update aud_a"]]);
  });

  it("read under the member lock: in the lock's statement when the write takes it so, else on their own", async () => {
    const reads: string[] = [];
    /** A read, and the text of the subquery it gives the lock's statement. */
    const read = () => {
      const alongside = Prisma.sql`(SELECT 'types')`;
      return {
        alongside: () => alongside,
        parse: (json: string) => `parsed ${json}`,
        read: async () => {
          reads.push("own statement");
          return "read alone";
        },
        sent: alongside.text,
      };
    };
    const lockWith = (answer: string | undefined) => {
      const { audiences, locks } = setUp();
      const sent: string[] = [];
      audiences.locks.memberWritesReading = async (_tx, _ws, alongside) => {
        audiences.taken.push("members");
        sent.push(alongside.text);
        return answer;
      };
      return { audiences, locks, sent };
    };

    // The lock's statement answered: its answer, parsed, and no statement of its own.
    const answered = lockWith('{"score":"number"}');
    const first = read();
    expect(await answered.locks.readUnderMembers(true, "reading", first)).toBe('parsed {"score":"number"}');
    expect([answered.audiences.taken, answered.sent, reads]).toEqual([["members"], [first.sent], []]);
    // The lock held now: a later read with lockFirst reads on its own, without a second lock.
    expect(await answered.locks.readUnderMembers(true, "reading", read())).toBe("read alone");
    expect([answered.audiences.taken, reads]).toEqual([["members"], ["own statement"]]);

    // The lock's statement could not answer (a member write committed meanwhile): read again.
    const unanswered = lockWith(undefined);
    expect(await unanswered.locks.readUnderMembers(true, "reading", read())).toBe("read alone");
    expect([unanswered.audiences.taken, reads.length]).toEqual([["members"], 2]);

    // Without lockFirst, the member lock must already be held: nothing is sent without it.
    const unlocked = lockWith("never");
    await expect(unlocked.locks.readUnderMembers(false, "reading the field types", read())).rejects.toThrow(
      new LockOrderError("reading the field types needs the workspace's member lock"),
    );
    expect([unlocked.audiences.taken, reads.length]).toEqual([[], 2]);
    await unlocked.locks.members();
    expect(await unlocked.locks.readUnderMembers(false, "reading", read())).toBe("read alone");
    expect([unlocked.audiences.taken, unlocked.sent, reads.length]).toEqual([["members"], [], 3]);

    // With lockFirst after an audience's lock: refused as the member lock is, before any statement.
    const late = lockWith("never");
    await late.locks.writable("aud_a");
    await expect(late.locks.readUnderMembers(true, "reading", read())).rejects.toThrow(
      "the member lock is taken before any audience lock",
    );
    expect([late.audiences.taken, late.sent, reads.length]).toEqual([["update aud_a"], [], 3]);
  });

  it("take the member lock and then an audience's in one statement, the audience checked as writable", async () => {
    const { audiences, locks } = setUp();
    const { row } = await locks.writableReading("aud_b", Prisma.empty, { memberLock: true });
    expect([row.id, locks.holdsMembers(), locks.holds("aud_b", "update")]).toEqual(["aud_b", true, true]);
    // Several audiences now: under the member lock.
    await locks.following(["aud_a"]);
    expect(audiences.taken).toEqual(["members", "update aud_b", "update aud_a"]);
    const archived = setUp();
    await expect(archived.locks.writableReading("aud_old", Prisma.empty, { memberLock: true })).rejects.toMatchObject({
      code: "audience_archived",
    });
    // The member lock is held all the same: the statement took it.
    expect(archived.locks.holdsMembers()).toBe(true);
    const late = setUp();
    await late.locks.writable("aud_a");
    await expect(late.locks.writableReading("aud_a", Prisma.empty, { memberLock: true })).rejects.toThrow(
      "the member lock is taken before any audience lock",
    );
    expect(late.audiences.taken).toEqual(["update aud_a"]);
  });

  it("lock one audience with a read without the member lock, and a second one only under it", async () => {
    const { audiences, locks } = setUp();
    const { row } = await locks.writableReading("aud_a", Prisma.empty);
    expect([row.id, locks.holdsMembers(), locks.holds("aud_a", "update")]).toEqual(["aud_a", false, true]);
    await locks.writableReading("aud_a", Prisma.empty);
    await expect(locks.writableReading("aud_b", Prisma.empty)).rejects.toBeInstanceOf(LockOrderError);
    await expect(locks.following(["aud_rule"])).rejects.toBeInstanceOf(LockOrderError);
    expect(audiences.taken).toEqual(["update aud_a", "update aud_a"]);
  });

  it("answer 404 for an unknown audience and 409 for an archived one to change", async () => {
    await expect(setUp().locks.writable("aud_none")).rejects.toMatchObject({ status: 404, code: "audience_not_found" });
    await expect(setUp().locks.writable("aud_old")).rejects.toMatchObject({ status: 409, code: "audience_archived" });
    expect(await setUp().locks.audience("aud_none")).toBeUndefined();
  });

  it("check merge sources in the order given", async () => {
    const { locks } = setUp();
    await locks.members();
    await expect(locks.sources(["aud_x", "aud_old"])).rejects.toMatchObject({ code: "audience_not_found" });
    await expect(locks.sources(["aud_old", "aud_x"])).rejects.toMatchObject({ code: "audience_archived" });
  });

  it("know when every audience is locked", async () => {
    const { locks } = setUp();
    expect(locks.holdsAll()).toBe(false);
    await locks.members();
    await locks.all();
    expect(locks.holdsAll()).toBe(true);
    expect(locks.holds("aud_old", "update")).toBe(true);
  });

  it("take the member lock once, however often it is asked for", async () => {
    const { audiences, locks } = setUp();
    expect(locks.holdsMembers()).toBe(false);
    await locks.members();
    await locks.writable("aud_a");
    await locks.members();
    expect(locks.holdsMembers()).toBe(true);
    expect(audiences.taken).toEqual(["members", "update aud_a"]);
  });

  it("keep an audience held for update when it is locked again as a source", async () => {
    const { audiences, locks } = setUp();
    await locks.members();
    await locks.writable("aud_a");
    await locks.sources(["aud_a", "aud_b"]);
    expect(locks.holds("aud_a", "update")).toBe(true);
    expect(locks.holds("aud_b", "update")).toBe(false);
    await locks.following(["aud_a", "aud_b"]);
    expect(locks.holds("aud_b", "update")).toBe(true);
    expect(audiences.taken).toEqual(["members", "update aud_a", "share aud_a", "share aud_b", "update aud_b"]);
  });

  it("lock a source again without the member lock when it is the one audience held", async () => {
    const { audiences, locks } = setUp();
    await locks.sources(["aud_a"]);
    await locks.sources(["aud_a", "aud_a"]);
    expect(await locks.audience("aud_a")).toMatchObject({ id: "aud_a" });
    await expect(locks.sources(["aud_b"])).rejects.toThrow(
      "sources: several audiences are locked only under the workspace's member lock",
    );
    await expect(locks.audience("aud_b")).rejects.toThrow(
      "audience: several audiences are locked only under the workspace's member lock",
    );
    expect(audiences.taken).toEqual(["share aud_a", "share aud_a", "update aud_a"]);
  });

  it("lock an outdated rule's audience only under the member lock, and only while it is outdated", async () => {
    const { audiences, locks } = setUp();
    audiences.rows.set("aud_old_rule", { ...audiences.add("aud_old_rule"), ruleOutdated: true });
    await expect(locks.ruleOutdated("aud_old_rule")).rejects.toThrow(
      "refreshing a rule needs the workspace's member lock",
    );
    await locks.members();
    expect(await locks.ruleOutdated("aud_rule")).toBeUndefined();
    expect(locks.holds("aud_rule", "share")).toBe(false);
    expect(await locks.ruleOutdated("aud_old_rule")).toMatchObject({ id: "aud_old_rule" });
    expect(locks.holds("aud_old_rule", "update")).toBe(true);
  });
});

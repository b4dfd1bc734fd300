// A write whose last statement moves its audiences records its events, record and size history in
// that statement (membership-writer.ts `closing`): on the fakes, whose sets record what such a
// statement carries as its SQL would (fake-stores.ts closeWith), it must record exactly what the
// write would have recorded on its own, and only when nothing needs netting or follows.

import { describe, expect, it } from "vitest";
import { Prisma } from "../../generated/prisma/client.ts";
import { membersOf } from "../../src/features/membership/member-set.ts";
import type { MembershipWriter } from "../../src/features/membership/membership-service.ts";
import type { OutboxEntry } from "../../src/features/membership/outbox-entries.ts";
import type { Filter } from "../../src/features/membership/rules/filter.ts";
import { fakeMembership } from "./fakes/fake-stores.ts";

const ACME: Filter = { field: "fields.company", op: "eq", value: "acme" };

/** A membership on fakes; each write's records, readably, and how many closed in their last statement. */
function setUp() {
  const writes: string[][] = [];
  const sizes: unknown[] = [];
  const { sets, audiences, membership } = fakeMembership(
    {
      async record(_tx, _ws, entries: OutboxEntry[]) {
        writes.push(
          entries.map((e) =>
            e.type === "audience.members_changed"
              ? `${e.audienceId} ${e.reason} +${membersOf(e.entered).map(sets.idOf)} -${membersOf(e.left).map(sets.idOf)}`
              : e.type,
          ),
        );
      },
      committed: () => {},
    },
    { record: async (_tx, _ws, changes) => void sizes.push(changes) },
  );
  let closings = 0;
  const recordClosing = sets.recordClosing;
  sets.recordClosing = (tx, entries) => {
    closings++;
    return recordClosing(tx, entries);
  };
  const write = <T>(fn: (w: MembershipWriter) => Promise<T>) =>
    membership.workspaceWrite("ws", { memberWrites: true }, fn);
  return { sets, audiences, writes, sizes, write, closings: () => closings };
}

describe("a write closed by its last statement", () => {
  it("records a change by hand as a record of its own does, and nothing for a change of nothing", async () => {
    const { sets, audiences, writes, sizes, write, closings } = setUp();
    audiences.add("aud_a");
    const ada = sets.addMember("ada");
    const bob = sets.addMember("bob");
    const change = await write(async (w) => {
      await w.locks.writable("aud_a");
      w.publish({ type: "audience.renamed", audienceId: "aud_a", name: "A", previousName: "a" });
      return w.include("aud_a", [ada.seq, bob.seq], { last: true });
    });
    expect(membersOf(change.entered).map(sets.idOf)).toEqual(["ada", "bob"]);
    await write(async (w) => {
      await w.locks.writable("aud_a");
      await w.exclude("aud_a", ["bob"], { last: true });
    });
    await write(async (w) => {
      await w.locks.writable("aud_a");
      await w.exclude("aud_a", ["bob"], { last: true });
    });
    expect(writes).toEqual([["audience.renamed", "aud_a manual +ada,bob -"], ["aud_a manual + -bob"]]);
    expect(sizes).toEqual([
      [{ audienceId: "aud_a", entered: 2, left: 0 }],
      [{ audienceId: "aud_a", entered: 0, left: 1 }],
    ]);
    expect(closings()).toBe(2);
  });

  it("is not taken when a rule follows the audience, or the write moved members before", async () => {
    const { sets, audiences, writes, write, closings } = setUp();
    audiences.add("aud_a");
    audiences.add("aud_b");
    audiences.add("aud_c", { filter: { field: "audience", op: "in", value: "aud_a" } });
    const ada = sets.addMember("ada");
    // aud_c follows aud_a: its change comes after, in the write's own record.
    await write(async (w) => {
      await w.locks.writable("aud_a");
      await w.include("aud_a", [ada.seq], { last: true });
    });
    // A member moved in and out again by one write never held that membership: only netting tells.
    await write(async (w) => {
      await w.locks.writable("aud_b");
      await w.include("aud_b", [ada.seq]);
      await w.exclude("aud_b", ["ada"], { last: true });
    });
    expect(writes).toEqual([["aud_a manual +ada -", "aud_c dependency +ada -"]]);
    expect(closings()).toBe(0);
  });

  it("records members' changes under their reasons, those of audiences that name moved ones after", async () => {
    const { sets, audiences, writes, write, closings } = setUp();
    audiences.add("aud_z", { filter: ACME });
    audiences.add("aud_y", { filter: { field: "audience", op: "in", value: "aud_z" } });
    audiences.add("aud_x", { filter: { field: "fields.company", op: "eq", value: "initech" } });
    sets.addMember("ada", { company: "Initech" });
    await write((w) => w.followMembers(["ada"], [], { last: true }));
    sets.setFields("ada", { company: "Acme" });
    await write(async (w) => {
      w.publish({ type: "members.updated", members: [{ id: "ada", changed: ["fields.company"] }] });
      await w.followMembers(["ada"], [], { last: true });
    });
    expect(writes).toEqual([
      ["aud_x member_changed +ada -"],
      ["members.updated", "aud_x member_changed + -ada", "aud_z member_changed +ada -", "aud_y dependency +ada -"],
    ]);
    expect(closings()).toBe(2);
  });

  it("records a rule's change, and refuses events recorded after it", async () => {
    const { sets, audiences, writes, write, closings } = setUp();
    audiences.add("aud_a");
    sets.addMember("ada", { company: "Acme" });
    await write(async (w) => {
      await w.locks.writable("aud_a");
      w.publish({ type: "audience.filter_changed", audienceId: "aud_a", filter: ACME });
      await w.setRule("aud_a", ACME, undefined, { last: true });
    });
    const late = write(async (w) => {
      await w.locks.writable("aud_a");
      await w.setRule("aud_a", null, undefined, { last: true });
      w.publish({ type: "audience.renamed", audienceId: "aud_a", name: "A", previousName: "a" });
    });
    await expect(late).rejects.toThrow("a write recorded events after its closing statement");
    expect(writes).toEqual([["audience.filter_changed", "aud_a rule +ada -"], ["aud_a rule + -ada"]]);
    expect(closings()).toBe(2);
  });

  it("closes a write whose last statement moves nobody, and refuses a change after it", async () => {
    const { sets, audiences, writes, write, closings } = setUp();
    audiences.add("aud_a");
    audiences.add("aud_b");
    const ada = sets.addMember("ada");
    // No rule-based audience: the member's new data is written alone, with the write's events.
    await write(async (w) => {
      w.publish({ type: "members.updated", members: [{ id: "ada", changed: ["fields.plan"] }] });
      await w.followMembers([], [], { writes: Prisma.sql`updated AS (SELECT 1)`, last: true });
    });
    const after = write(async (w) => {
      await w.locks.writable("aud_a");
      await w.locks.writable("aud_b");
      await w.include("aud_a", [ada.seq], { last: true });
      await w.include("aud_b", [ada.seq]);
    });
    await expect(after).rejects.toThrow("a write changed members after its closing statement");
    expect(writes).toEqual([["members.updated"], ["aud_a manual +ada -"]]);
    expect(closings()).toBe(2);
  });
});

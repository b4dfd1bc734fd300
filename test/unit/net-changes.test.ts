import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ChangeReason, memberSetOf, membersOf } from "../../src/features/membership/member-set.ts";
import { netChanges } from "../../src/features/membership/net-changes.ts";
import type { OutboxEntry } from "../../src/features/membership/outbox-entries.ts";

const changed = (audienceId: string, reason: ChangeReason, entered: number[], left: number[]): OutboxEntry => ({
  type: "audience.members_changed",
  audienceId,
  reason,
  entered: memberSetOf(entered),
  left: memberSetOf(left),
});
const readable = (entries: OutboxEntry[]) =>
  entries.map((e) =>
    e.type === "audience.members_changed"
      ? [e.audienceId, e.reason, membersOf(e.entered), membersOf(e.left)]
      : [e.type, "audienceId" in e ? e.audienceId : null],
  );

describe("a write's membership events, netted", () => {
  it("drop a member who entered and left again, and an audience left with no change", () => {
    const entries = netChanges([
      changed("aud_beta", "manual", [1, 2], []),
      changed("aud_not_pro", "dependency", [1, 2], []),
      changed("aud_pro", "member_changed", [1, 2], []),
      changed("aud_not_pro", "member_changed", [], [1, 2]),
    ]);
    expect(readable(entries)).toEqual([
      ["aud_beta", "manual", [1, 2], []],
      ["aud_pro", "member_changed", [1, 2], []],
    ]);
  });

  it("keep the reason of a member's last move, where that reason's first change stood", () => {
    const entries = netChanges([
      changed("aud_a", "rule", [1, 2], []),
      { type: "audience.renamed", audienceId: "aud_a", name: "A", previousName: "B" },
      changed("aud_a", "manual", [], [1]),
      changed("aud_a", "manual", [1], [2]),
      changed("aud_a", "rule", [9000], []),
    ]);
    expect(readable(entries)).toEqual([
      ["aud_a", "rule", [9000], []],
      ["audience.renamed", "aud_a"],
      ["aud_a", "manual", [1], []],
    ]);
  });

  it("leave a write with one change, or none, as it is", () => {
    const one = [changed("aud_a", "manual", [3], []), { type: "members.deleted", memberIds: ["m"] } as OutboxEntry];
    expect(netChanges(one)).toEqual(one);
    expect(netChanges([])).toEqual([]);
  });

  it("give, for any sequence of moves, each audience's difference between before and after the write", () => {
    const audiences = ["aud_a", "aud_b"];
    const reasons: ChangeReason[] = ["manual", "rule", "dependency", "member_changed"];
    const moves = fc.array(
      fc.record({
        audience: fc.constantFrom(...audiences),
        reason: fc.constantFrom(...reasons),
        members: fc.uniqueArray(fc.constantFrom(0, 1, 2, 8191, 8192, 20000), { minLength: 1 }),
      }),
      { maxLength: 12 },
    );
    const start = fc.record({ aud_a: fc.subarray([0, 1, 2, 8191, 8192, 20000]), aud_b: fc.subarray([0, 1, 20000]) });
    fc.assert(
      fc.property(start, moves, (initial, sequence) => {
        const state = new Map(audiences.map((id) => [id, new Set(initial[id as keyof typeof initial])]));
        const recorded: OutboxEntry[] = [];
        // Each move flips its members: those in the audience leave, the others enter.
        for (const { audience, reason, members } of sequence) {
          const now = state.get(audience) as Set<number>;
          const entered = members.filter((m) => !now.has(m));
          const left = members.filter((m) => now.has(m));
          for (const m of entered) now.add(m);
          for (const m of left) now.delete(m);
          recorded.push(changed(audience, reason, entered, left));
        }
        const netted = netChanges(recorded).filter((e) => e.type === "audience.members_changed");
        for (const id of audiences) {
          const before = new Set(initial[id as keyof typeof initial]);
          const after = state.get(id) as Set<number>;
          const mine = netted.filter((e) => e.audienceId === id);
          const entered = mine.flatMap((e) => membersOf(e.entered)).sort((a, b) => a - b);
          const left = mine.flatMap((e) => membersOf(e.left)).sort((a, b) => a - b);
          expect(entered).toEqual([...after].filter((m) => !before.has(m)).sort((a, b) => a - b));
          expect(left).toEqual([...before].filter((m) => !after.has(m)).sort((a, b) => a - b));
          // One entry per reason, none empty.
          expect(new Set(mine.map((e) => e.reason)).size).toBe(mine.length);
          for (const e of mine) expect(membersOf(e.entered).length + membersOf(e.left).length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 150 },
    );
  });
});

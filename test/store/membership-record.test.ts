// The membership record's reads at chosen instants, and its compaction to the horizon: what any
// instant since the cutoff answers is the same before and after, and nothing older is kept but
// the last entry of a member still in at the cutoff. History across weeks cannot be produced by
// waiting, so the rows are written at chosen instants. On the embedded store, and on PostgreSQL
// when TEST_DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "../../generated/prisma/client.ts";
import { recordRepo } from "../../src/features/history/record-repo.ts";
import type { Store } from "../../src/platform/db/database.ts";
import { openRecordStore } from "../support/record-store.ts";

const ws = "ws_membership_record";
const AUDIENCE = "aud_record";
const at = (iso: string) => new Date(iso);
/** An instant as the service asks the store for it: everything recorded before it, a ms later. */
const asOf = (iso: string) => new Date(Date.parse(iso) + 1);

/** Member number → [instant, entered] in time order. */
const TRANSITIONS: Record<number, [string, boolean][]> = {
  1: [
    ["2026-01-02T00:00:00.000Z", true],
    ["2026-01-05T00:00:00.000Z", false],
    ["2026-01-10T00:00:00.000Z", true],
  ],
  2: [
    ["2026-01-02T00:00:00.000Z", true],
    ["2026-01-05T00:00:00.000Z", false],
  ],
  3: [
    ["2026-01-02T00:00:00.000Z", true],
    ["2026-01-25T00:00:00.000Z", false],
  ],
  4: [["2026-01-25T00:00:00.000Z", true]],
};
const CUTOFF = "2026-01-20T00:00:00.000Z";

describe("the membership record", () => {
  let store: Store;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ store, close } = await openRecordStore(ws, AUDIENCE, at("2026-01-01T00:00:00.000Z")));
    for (const seq of [1, 2, 3, 4]) {
      await store.db.$executeRaw`
        INSERT INTO members (workspace_id, id, seq, created_at) VALUES (${ws}, ${`m${seq}`}, ${seq}, ${at("2026-01-01T00:00:00.000Z")})`;
    }
    await insertTransitions(TRANSITIONS);
    // Two members deleted, one before the cutoff and one after it.
    await store.db.$executeRaw`
      INSERT INTO deleted_members (workspace_id, seq, id, created_at, deleted_at) VALUES
        (${ws}, 5, 'gone-early', ${at("2026-01-01T00:00:00.000Z")}, ${at("2026-01-10T00:00:00.000Z")}),
        (${ws}, 6, 'gone-late', ${at("2026-01-01T00:00:00.000Z")}, ${at("2026-01-25T00:00:00.000Z")})`;
  });
  afterAll(() => close());

  /** Bits of a chunk with these positions set (SQL; NULL for none). */
  const bitsOf = (positions: number[]) =>
    Prisma.sql`(SELECT bit_or(set_bit(B'0'::bit(8192), p, 1)) FROM unnest(${positions}::int[]) AS p)`;

  /**
   * Writes transitions as the record holds them: per instant (all members here are in chunk 0),
   * who entered, who left, and the chunk's members after it, as a write would have left them.
   */
  async function insertTransitions(transitions: Record<number, [string, boolean][]>) {
    const [known] = await store.db.$queryRaw<{ seqs: number[] | null }[]>`
      SELECT array_agg(s.seq ORDER BY s.seq) AS seqs FROM membership_record AS r
      CROSS JOIN LATERAL generate_series(0, 8191) AS s(seq)
      WHERE r.workspace_id = ${ws} AND r.at = (SELECT max(at) FROM membership_record WHERE workspace_id = ${ws})
        AND get_bit(r.members, s.seq) = 1`;
    const members = new Set(known?.seqs ?? []);
    const instants = [
      ...new Set(Object.values(transitions).flatMap((rows) => rows.map(([instant]) => instant))),
    ].sort();
    for (const instant of instants) {
      const moved = Object.entries(transitions).flatMap(([seq, rows]) =>
        rows.filter(([i]) => i === instant).map(([, entered]) => [Number(seq), entered] as const),
      );
      for (const [seq, entered] of moved) {
        if (entered) members.add(seq);
        else members.delete(seq);
      }
      const entered = moved.filter(([, e]) => e).map(([seq]) => seq);
      const exited = moved.filter(([, e]) => !e).map(([seq]) => seq);
      await store.db.$executeRaw`
        INSERT INTO membership_record (workspace_id, audience_id, chunk, at, reason, entered, exited, members)
        VALUES (${ws}, ${AUDIENCE}, 0, ${at(instant)}, 'manual', ${bitsOf(entered)}, ${bitsOf(exited)},
          coalesce(${bitsOf([...members])}, B'0'::bit(8192)))`;
    }
  }

  /** The transitions the record holds, as (member number, instant), from its rows' bits. */
  const keptTransitions = () => store.db.$queryRaw<{ seq: number; at: Date }[]>`
    SELECT s.seq, r.at FROM membership_record AS r CROSS JOIN LATERAL generate_series(0, 8191) AS s(seq)
    WHERE r.workspace_id = ${ws}
      AND get_bit(coalesce(r.entered, B'0'::bit(8192)) | coalesce(r.exited, B'0'::bit(8192)), s.seq) = 1
    ORDER BY s.seq, r.at`;

  const membersAt = async (iso: string) =>
    (await recordRepo.pageAsOf(store.db, ws, AUDIENCE, { before: asOf(iso), ascending: true, limit: 10 })).rows.map(
      (row) => row.id,
    );

  const changesBetween = async (from: string, to: string) => {
    const span = await recordRepo.changes(store.db, ws, AUDIENCE, { from: asOf(from), to: asOf(to), limit: 10 });
    return { ...span, rows: span.rows.map((row) => [row.memberId, row.entered]) };
  };

  /** What every instant since the cutoff answers. */
  async function sinceTheCutoff() {
    return {
      atCutoff: await membersAt(CUTOFF),
      after: await membersAt("2026-01-26T00:00:00.000Z"),
      changes: await changesBetween(CUTOFF, "2026-01-26T00:00:00.000Z"),
    };
  }

  it("answers instants from the transitions, and keeps them after compaction", async () => {
    expect(await membersAt("2026-01-01T12:00:00.000Z")).toEqual([]);
    expect(await membersAt("2026-01-02T00:00:00.000Z")).toEqual(["m1", "m2", "m3"]);
    expect(await membersAt("2026-01-06T00:00:00.000Z")).toEqual(["m3"]);
    const before = await sinceTheCutoff();
    expect(before.atCutoff).toEqual(["m1", "m3"]);
    expect(before.after).toEqual(["m1", "m4"]);
    expect(before.changes.rows).toEqual([
      ["m3", false],
      ["m4", true],
    ]);
    expect([before.changes.counts, before.changes.moves]).toEqual([
      { entered: 1, left: 1 },
      { entered: 1, left: 1 },
    ]);

    // m1's and m2's first two transitions (the row of 01-05, and those members of the row of
    // 01-02), and the member deleted before the cutoff: a row and a member deleted.
    expect(await recordRepo.compactBefore(store.db, at(CUTOFF))).toBe(2);
    // A second pass finds nothing more to compact.
    expect(await recordRepo.compactBefore(store.db, at(CUTOFF))).toBe(0);
    expect(await sinceTheCutoff()).toEqual(before);

    const kept = await keptTransitions();
    expect(kept.map((row) => [row.seq, row.at.toISOString()])).toEqual([
      [1, "2026-01-10T00:00:00.000Z"],
      [3, "2026-01-02T00:00:00.000Z"],
      [3, "2026-01-25T00:00:00.000Z"],
      [4, "2026-01-25T00:00:00.000Z"],
    ]);
    const deleted = await store.db.$queryRaw<{ id: string }[]>`
      SELECT id FROM deleted_members WHERE workspace_id = ${ws} ORDER BY seq`;
    expect(deleted.map((row) => row.id)).toEqual(["gone-late"]);
  });

  it("compacts, in a later pass, only the members that moved since the week before its cutoff", async () => {
    await insertTransitions({ 4: [["2026-01-27T00:00:00.000Z", false]] });
    const cutoff = at("2026-01-28T00:00:00.000Z");
    // m3 and m4 moved since 01-21 and are out at the cutoff: their four transitions go (the rows
    // of 01-02 and 01-25 with them), m1's entry stays; and the member deleted on 01-25 is forgotten.
    expect(await recordRepo.compactBefore(store.db, cutoff, at("2026-01-21T00:00:00.000Z"))).toBe(3);
    expect(await membersAt("2026-01-28T00:00:00.000Z")).toEqual(["m1"]);
    const kept = await keptTransitions();
    expect(kept.map((row) => row.seq)).toEqual([1]);
  });
});

// A chunk of at most 64 members is stored as their positions, a fuller one as its 8,192 bits (the
// migration membership_chunk_positions). A chunk moves between the two forms as members enter and
// leave, by hand, by a rule's recompute and by a rule followed after a member's change, and
// whatever its form the audience's members, counts, pages and reported changes stay exact.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workspaceRepo } from "../../src/features/admin/workspace-repo.ts";
import { audienceRepo } from "../../src/features/membership/audience-repo.ts";
import { CHUNK_BITS } from "../../src/features/membership/member-bits-sql.ts";
import { memberRepo } from "../../src/features/membership/member-repo.ts";
import { membersOf } from "../../src/features/membership/member-set.ts";
import { pageAudience } from "../../src/features/membership/pages/member-page-repo.ts";
import type { Store } from "../../src/platform/db/database.ts";
import type { EventSink } from "../support/event-sink.ts";
import { openTestStore } from "../support/live-server.ts";
import { storeMembership } from "../support/store-membership.ts";

/** The most members a chunk stored as positions holds. */
const FEW = 64;
const ws = "ws_chunk_forms";
/** Members m000 … m149, numbered from just before a chunk's end, so that they fill two chunks. */
const FIRST_SEQ = CHUNK_BITS - 20;
const ids = Array.from({ length: 150 }, (_, i) => `m${String(i).padStart(3, "0")}`);

let store: Store;
let close: () => Promise<void>;
const names = new Map<number, string>();
const seqOf = new Map<string, number>();
let seen: { audienceId: string; entered: string[]; left: string[] }[] = [];
const events: EventSink = {
  async record(_tx, _ws, entries) {
    for (const e of entries) {
      if (e.type !== "audience.members_changed") continue;
      const read = (set: typeof e.entered) => membersOf(set).map((seq) => names.get(seq) as string);
      seen.push({ audienceId: e.audienceId, entered: read(e.entered), left: read(e.left) });
    }
  },
  committed: () => {},
};

beforeAll(async () => {
  ({ store, close } = await openTestStore());
  await workspaceRepo.create(store.db, { id: ws, name: ws });
  await store.transaction(async (tx) => {
    await tx.$executeRaw`UPDATE workspaces SET member_seq = ${FIRST_SEQ} WHERE workspace_id = ${ws}`;
    const inputs = ids.map((id, i) => ({
      id,
      data: { email: null, fields: { tier: i < FEW + 1 ? "gold" : "plain" }, alternativeEmails: [] },
    }));
    const { seqs } = await memberRepo.insert(tx, ws, inputs, []);
    for (const [id, seq] of seqs) {
      names.set(seq, id);
      seqOf.set(id, seq);
    }
    for (const id of ["aud_hand", "aud_rule"]) await audienceRepo.create(tx, { workspaceId: ws, id, name: id });
  });
});
afterAll(() => close());

const membership = () => storeMembership(store, { events });

/** The audience's stored chunks: kind, chunk, form and count. */
const forms = (audienceId: string) =>
  store.db.$queryRaw<{ kind: string; chunk: number; form: string; count: number }[]>`
    SELECT kind::text AS kind, chunk,
           CASE WHEN bits IS NOT NULL AND seqs IS NULL THEN 'bits'
                WHEN seqs IS NOT NULL AND bits IS NULL AND cardinality(seqs) = count THEN 'positions'
                ELSE 'broken' END AS form,
           count
    FROM membership_chunks WHERE workspace_id = ${ws} AND audience_id = ${audienceId}
    ORDER BY membership_chunks.kind, chunk`;

/**
 * The audience as a user reads it: its size and every member, in pages of 40, read both ways a
 * page may be read (its numbers spelled out in SQL, as on PostgreSQL, or in the process, as on
 * the embedded store), which must agree.
 */
async function read(audienceId: string) {
  const readAll = async (spellOutInSql: boolean) => {
    const members: string[] = [];
    let after: { createdAt: Date; id: string } | undefined;
    let size: number | null = null;
    for (;;) {
      const page = await pageAudience(
        store.db,
        ws,
        audienceId,
        { sortDirection: "ASC", limit: 40, after },
        { spellOutInSql },
      );
      size = page.memberCount;
      members.push(...page.rows.map((row) => row.id));
      const last = page.rows.at(-1);
      if (!page.hasNextPage || !last) break;
      after = { createdAt: last.createdAt, id: last.id };
    }
    return { size, members };
  };
  const inSql = await readAll(true);
  expect(await readAll(false)).toEqual(inSql);
  return inSql;
}

/** Runs a write and returns the changes it reported, per audience. */
async function changes(write: Parameters<ReturnType<typeof membership>["workspaceWrite"]>[2]) {
  seen = [];
  await membership().workspaceWrite(ws, { memberWrites: true }, write);
  return seen;
}

const inChunk = (chunk: number) => ids.filter((id) => (seqOf.get(id) as number) >> 13 === chunk);

describe("a chunk's stored form", () => {
  it("follows its members across the threshold, by hand, both ways", async () => {
    // The 20 members of the first chunk, and 44 of the second: 64 there.
    const [first, second] = [inChunk(0), inChunk(1)];
    expect(first).toHaveLength(20);
    const added = [...first, ...second.slice(0, FEW)];
    const seqs = (list: string[]) => list.map((id) => seqOf.get(id) as number);

    expect(await changes((w) => w.locks.writable("aud_hand").then(() => w.include("aud_hand", seqs(added))))).toEqual([
      { audienceId: "aud_hand", entered: added, left: [] },
    ]);
    expect(await forms("aud_hand")).toEqual([
      { kind: "member", chunk: 0, form: "positions", count: 20 },
      { kind: "member", chunk: 1, form: "positions", count: FEW },
      { kind: "include", chunk: 0, form: "positions", count: 20 },
      { kind: "include", chunk: 1, form: "positions", count: FEW },
    ]);
    expect(await read("aud_hand")).toEqual({ size: 20 + FEW, members: added });

    // One more: the second chunk holds 65 and is stored whole.
    const more = second[FEW] as string;
    expect(await changes((w) => w.locks.writable("aud_hand").then(() => w.include("aud_hand", seqs([more]))))).toEqual([
      { audienceId: "aud_hand", entered: [more], left: [] },
    ]);
    expect((await forms("aud_hand")).filter((f) => f.chunk === 1)).toEqual([
      { kind: "member", chunk: 1, form: "bits", count: FEW + 1 },
      { kind: "include", chunk: 1, form: "bits", count: FEW + 1 },
    ]);
    expect(await read("aud_hand")).toEqual({ size: 21 + FEW, members: [...added, more] });

    // One taken out by hand: back to positions, and the exclude is one position.
    const out = second[3] as string;
    expect(await changes((w) => w.locks.writable("aud_hand").then(() => w.exclude("aud_hand", [out])))).toEqual([
      { audienceId: "aud_hand", entered: [], left: [out] },
    ]);
    expect((await forms("aud_hand")).filter((f) => f.chunk === 1)).toEqual([
      { kind: "member", chunk: 1, form: "positions", count: FEW },
      { kind: "include", chunk: 1, form: "positions", count: FEW },
      { kind: "exclude", chunk: 1, form: "positions", count: 1 },
    ]);
    const now = [...added, more].filter((id) => id !== out);
    expect(await read("aud_hand")).toEqual({ size: 20 + FEW, members: now });
    const [row] = await store.db.$queryRaw<{ memberCount: number }[]>`
      SELECT member_count AS "memberCount" FROM audiences WHERE workspace_id = ${ws} AND id = 'aud_hand'`;
    expect(row?.memberCount).toBe(20 + FEW);
  });

  it("follows a rule's matches across the threshold, both ways", async () => {
    // tier = gold: m000 … m064, 20 in the first chunk and 45 in the second.
    const gold = ids.slice(0, FEW + 1);
    const rule = { field: "fields.tier", op: "eq", value: "gold" } as const;
    expect(await changes((w) => w.locks.writable("aud_rule").then(() => w.setRule("aud_rule", rule)))).toEqual([
      { audienceId: "aud_rule", entered: gold, left: [] },
    ]);
    expect(await forms("aud_rule")).toEqual([
      { kind: "member", chunk: 0, form: "positions", count: 20 },
      { kind: "member", chunk: 1, form: "positions", count: 45 },
      { kind: "match", chunk: 0, form: "positions", count: 20 },
      { kind: "match", chunk: 1, form: "positions", count: 45 },
    ]);

    // Twenty more members of the second chunk turn gold: 65 there, followed after their change.
    const turned = ids.slice(FEW + 1, FEW + 21);
    const data = (tier: string) => ({ email: null, fields: { tier }, alternativeEmails: [] });
    expect(
      await changes(async (w) => {
        await memberRepo.updateData(
          w.tx,
          ws,
          turned.map((id) => ({ id, data: data("gold") })),
        );
        await w.followMembers(turned);
      }),
    ).toEqual([{ audienceId: "aud_rule", entered: turned, left: [] }]);
    expect((await forms("aud_rule")).filter((f) => f.chunk === 1)).toEqual([
      { kind: "member", chunk: 1, form: "bits", count: 65 },
      { kind: "match", chunk: 1, form: "bits", count: 65 },
    ]);
    expect(await read("aud_rule")).toEqual({ size: 85, members: [...gold, ...turned] });

    // One of them turns plain again: 64, positions.
    const back = turned[7] as string;
    expect(
      await changes(async (w) => {
        await memberRepo.updateData(w.tx, ws, [{ id: back, data: data("plain") }]);
        await w.followMembers([back]);
      }),
    ).toEqual([{ audienceId: "aud_rule", entered: [], left: [back] }]);
    expect((await forms("aud_rule")).filter((f) => f.chunk === 1)).toEqual([
      { kind: "member", chunk: 1, form: "positions", count: FEW },
      { kind: "match", chunk: 1, form: "positions", count: FEW },
    ]);
    const members = [...gold, ...turned].filter((id) => id !== back);
    expect(await read("aud_rule")).toEqual({ size: 84, members });

    // The rule recomputed over everyone: the chunk goes whole again, then back.
    const everyone = { field: "fields.tier", op: "exists" } as const;
    const plain = ids.filter((id) => !members.includes(id));
    expect(await changes((w) => w.locks.writable("aud_rule").then(() => w.setRule("aud_rule", everyone)))).toEqual([
      { audienceId: "aud_rule", entered: plain, left: [] },
    ]);
    expect((await forms("aud_rule")).filter((f) => f.chunk === 1)).toEqual([
      { kind: "member", chunk: 1, form: "bits", count: 130 },
      { kind: "match", chunk: 1, form: "bits", count: 130 },
    ]);
    expect(await changes((w) => w.locks.writable("aud_rule").then(() => w.setRule("aud_rule", rule)))).toEqual([
      { audienceId: "aud_rule", entered: [], left: plain },
    ]);
    expect((await forms("aud_rule")).filter((f) => f.chunk === 1)).toEqual([
      { kind: "member", chunk: 1, form: "positions", count: FEW },
      { kind: "match", chunk: 1, form: "positions", count: FEW },
    ]);
    expect(await read("aud_rule")).toEqual({ size: 84, members });
  });
});

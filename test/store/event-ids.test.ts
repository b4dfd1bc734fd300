// The relay names the members of up to 4 chunks of a change in the statement that reads it (32,768
// member numbers): a change that fills them, such as a rule adding 250,000 members, must be named,
// not stop the workspace's events; and every id comes back as it was written, whatever its
// characters, for members that exist and for deleted ones, whether a chunk is read number by
// number or as its range. On the embedded store, and on PostgreSQL when TEST_DATABASE_URL is set.
import { afterAll, beforeAll, expect, it } from "vitest";
import { Prisma } from "../../generated/prisma/client.ts";
import { workspaceRepo } from "../../src/features/admin/workspace-repo.ts";
import { eventRepo } from "../../src/features/events/event-repo.ts";
import { audienceRepo } from "../../src/features/membership/audience-repo.ts";
import { memberRepo } from "../../src/features/membership/member-repo.ts";
import { memberSetOf } from "../../src/features/membership/member-set.ts";
import { sizeChangesOf } from "../../src/features/membership/net-changes.ts";
import type { Store } from "../../src/platform/db/database.ts";
import { openTestStore } from "../support/live-server.ts";
import { serviceRecords } from "../support/store-membership.ts";

let store: Store;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ store, close } = await openTestStore());
});
afterAll(() => close());

const data = { email: null, fields: {}, alternativeEmails: [] };

async function workspaceWith(ws: string, ids: string[]): Promise<Map<string, number>> {
  await workspaceRepo.create(store.db, { id: ws, name: ws });
  await audienceRepo.create(store.db, { workspaceId: ws, id: "aud_x", name: "x" });
  const { seqs } = await store.transaction((tx) =>
    memberRepo.insert(
      tx,
      ws,
      ids.map((id) => ({ id, data })),
      [],
    ),
  );
  return seqs;
}

/** The names the relay reads with an outbox entry of these members entering an audience (nothing published). */
async function namesOf(ws: string, seqs: number[]): Promise<[number, string][]> {
  const entry = { type: "audience.members_changed" as const, audienceId: "aud_x", reason: "rule" as const };
  const entries = [{ ...entry, entered: memberSetOf(seqs), left: memberSetOf([]) }];
  return store.transaction(async (tx) => {
    // As a write records it: the outbox's part reads the entry's members from the record's rows.
    await serviceRecords.record(tx, ws, entries, sizeChangesOf(entries));
    const read = await eventRepo.lockAndRead(tx, ws, { entries: 200, chunks: 5, namedChunks: 4 });
    await tx.$executeRaw(Prisma.sql`DELETE FROM event_outbox WHERE workspace_id = ${ws}`);
    await tx.$executeRaw(Prisma.sql`DELETE FROM event_outbox_members WHERE workspace_id = ${ws}`);
    return [...(read?.names ?? [])].sort();
  });
}

it("names the members of 4 full chunks of numbers in the read", async () => {
  const ws = "ws_event_ids";
  await workspaceWith(ws, ["first", "second"]);
  const seqs = Array.from({ length: 5 * 8192 }, (_, i) => i);
  expect(await namesOf(ws, seqs)).toEqual([
    [0, "first"],
    [1, "second"],
  ]);
});

it("names each member by its id as written, deleted members by their tombstones, in a range or picked out", async () => {
  const ws = "ws_event_ids_text";
  const written = ['a "quoted", comma', "back\\slash", "ünïcødé 名前", "[1,2]", "null", "plain"];
  // Enough members that their chunk is read as its range of numbers, not number by number.
  const others = Array.from({ length: 2100 }, (_, i) => `other_${i}`);
  const seqs = await workspaceWith(ws, [...written, ...others]);
  await store.transaction((tx) => memberRepo.delete(tx, ws, ["back\\slash", "plain"]));
  const expected = [...seqs].map(([id, seq]) => [seq, id]).sort();
  expect(await namesOf(ws, [...seqs.values()])).toEqual(expected);
  // A few numbers in a chunk are looked up one by one; so are their tombstones.
  const [low, high] = [seqs.get(written[0] as string) as number, seqs.get("plain") as number];
  expect(await namesOf(ws, [low, high, high + 100_000])).toEqual([
    [low, written[0]],
    [high, "plain"],
  ]);
});

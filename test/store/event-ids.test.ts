// The relay names the members of up to 4 chunks of a change at once (32,768 member numbers): a
// change that fills them, such as a rule adding 250,000 members, must be named, not stop the
// workspace's events; and every id comes back as it was written, whatever its characters, for
// members that exist and for deleted ones. On the embedded store, and on PostgreSQL when
// TEST_DATABASE_URL is set.
import { afterAll, beforeAll, expect, it } from "vitest";
import { workspaceRepo } from "../../src/features/admin/workspace-repo.ts";
import { eventRepo } from "../../src/features/events/event-repo.ts";
import { memberRepo } from "../../src/features/membership/member-repo.ts";
import type { Store } from "../../src/platform/db/database.ts";
import { openTestStore } from "../support/live-server.ts";

let store: Store;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ store, close } = await openTestStore());
});
afterAll(() => close());

const data = { email: null, fields: {}, alternativeEmails: [] };

async function workspaceWith(ws: string, ids: string[]): Promise<Map<string, number>> {
  await workspaceRepo.create(store.db, { id: ws, name: ws });
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

it("names the members of 16 full chunks of numbers in one call", async () => {
  const ws = "ws_event_ids";
  await workspaceWith(ws, ["first", "second"]);
  const seqs = Array.from({ length: 16 * 8192 }, (_, i) => i);
  const ids = await store.transaction((tx) => eventRepo.idsOf(tx, ws, seqs));
  expect([...ids].sort()).toEqual([
    [0, "first"],
    [1, "second"],
  ]);
});

it("names each member by its id as written, deleted members by their tombstones, in a range or picked out", async () => {
  const ws = "ws_event_ids_text";
  const written = ['a "quoted", comma', "back\\slash", "ünïcødé 名前", "[1,2]", "null", "plain"];
  const seqs = await workspaceWith(ws, written);
  await store.transaction((tx) => memberRepo.delete(tx, ws, ["back\\slash", "plain"]));
  const expected = written.map((id) => [seqs.get(id), id]).sort();
  const dense = await store.transaction((tx) => eventRepo.idsOf(tx, ws, [...seqs.values()]));
  expect([...dense].sort()).toEqual(expected);
  // Two numbers far apart are looked up one by one rather than as the range between them.
  const [low, high] = [seqs.get(written[0] as string) as number, seqs.get("plain") as number];
  const sparse = await store.transaction((tx) => eventRepo.idsOf(tx, ws, [low, high, high + 100_000]));
  expect([...sparse].sort()).toEqual([
    [low, written[0]],
    [high, "plain"],
  ]);
});

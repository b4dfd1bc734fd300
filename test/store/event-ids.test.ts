// The relay names the members of up to 16 chunks of a change at once (131,072 member numbers):
// a change that fills them, such as a rule adding 250,000 members, must be named, not stop the
// workspace's events. On the embedded store, and on PostgreSQL when TEST_DATABASE_URL is set.
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

it("names the members of 16 full chunks of numbers in one call", async () => {
  const ws = "ws_event_ids";
  await workspaceRepo.create(store.db, { id: ws, name: ws });
  const data = { email: null, fields: {}, alternativeEmails: [] };
  await store.transaction((tx) =>
    memberRepo.insert(
      tx,
      ws,
      [
        { id: "first", data },
        { id: "second", data },
      ],
      [],
    ),
  );
  const seqs = Array.from({ length: 16 * 8192 }, (_, i) => i);
  const ids = await store.transaction((tx) => eventRepo.idsOf(tx, ws, seqs));
  expect([...ids].sort()).toEqual([
    [0, "first"],
    [1, "second"],
  ]);
});

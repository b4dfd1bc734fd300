// Looking members up by id must go through the primary key (workspace_id, id) even when the
// statistics predate the workspace: right after a bulk load into a new workspace, the planner
// estimated it at one row, and a lookup chose another index starting with workspace_id, which
// scanned the whole workspace once per id (a bulk add of 10,000 ids to a workspace of 700,000
// members ran past the statement timeout). On the embedded store, and on PostgreSQL when
// TEST_DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workspaceRepo } from "../../src/features/admin/workspace-repo.ts";
import { byIds, memberRepo } from "../../src/features/membership/member-repo.ts";
import type { Store } from "../../src/platform/db/database.ts";
import { openTestStore } from "../support/live-server.ts";

const BATCH = 10_000;

let store: Store;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ store, close } = await openTestStore());
});
afterAll(() => close());

async function addMembers(workspaceId: string, ids: string[]): Promise<void> {
  for (let from = 0; from < ids.length; from += BATCH) {
    await store.transaction((tx) => memberRepo.insert(tx, workspaceId, [], ids.slice(from, from + BATCH)));
  }
}

describe("member lookups by id", () => {
  it("use the primary key in a workspace created after the last ANALYZE", async () => {
    await workspaceRepo.create(store.db, { id: "ws_old", name: "old" });
    await addMembers("ws_old", ["a", "b", "c"]);
    await store.db.$executeRawUnsafe("ANALYZE members");
    await workspaceRepo.create(store.db, { id: "ws_new", name: "new" });
    await addMembers(
      "ws_new",
      Array.from({ length: 3 * BATCH }, (_, i) => `m${i}`),
    );

    const lookedUp = ["m5", "m29999", "nobody"];
    const plan = await store.db.$queryRaw<{ "QUERY PLAN": string }[]>`
      EXPLAIN SELECT m.seq FROM ${byIds("ws_new", lookedUp)}`;
    const text = plan.map((row) => row["QUERY PLAN"]).join("\n");
    expect(text).toContain("members_pkey");
    expect(text).not.toMatch(/members_workspace_id_(created_at_id_idx|seq_key)/);

    const found = await store.transaction((tx) => memberRepo.findByIds(tx, "ws_new", lookedUp));
    expect(found.map((m) => m.id).sort()).toEqual(["m29999", "m5"]);
  });
});

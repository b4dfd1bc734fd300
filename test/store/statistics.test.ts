// The embedded store keeps its planner statistics itself: PGlite runs no autovacuum, and a query
// planned without statistics can take ten times as long (the member search did). PostgreSQL's
// own autovacuum does this there, so these tests are the embedded store's.
import { afterAll, beforeAll, describe, expect } from "vitest";
import { workspaceRepo } from "../../src/features/admin/workspace-repo.ts";
import { memberRepo } from "../../src/features/membership/member-repo.ts";
import type { Store } from "../../src/platform/db/database.ts";
import { statisticsRepo } from "../../src/platform/db/statistics-repo.ts";
import { addMembers, createAudience } from "../support/factories.ts";
// The server's members table must start without statistics: a server of its own.
import { testOnOwnServer as it } from "../support/fixture.ts";
import { openTestStore } from "../support/live-server.ts";

const onEmbedded = !process.env.TEST_DATABASE_URL;
type Db = Store["db"];

/** The columns of the members table that ANALYZE has gathered statistics for. */
const analyzedColumns = async (db: Db) =>
  (
    await db.$queryRaw<{ attname: string }[]>`
      SELECT attname FROM pg_stats WHERE schemaname = 'public' AND tablename = 'members' ORDER BY attname`
  ).map((row) => row.attname);

/** Changes to members since its last ANALYZE, as PostgreSQL has counted them so far. */
const changesCounted = async (db: Db) =>
  (
    await db.$queryRaw<{ n: number }[]>`
      SELECT n_mod_since_analyze::int AS n FROM pg_stat_user_tables WHERE relname = 'members'`
  )[0]?.n;

describe.runIf(onEmbedded)("embedded store statistics", () => {
  let store: Store;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ store, close } = await openTestStore());
    await workspaceRepo.create(store.db, { id: "ws_statistics", name: "statistics" });
  });
  afterAll(() => close());
  const insert = (from: number, count: number) =>
    store.transaction((tx) =>
      memberRepo.insert(
        tx,
        "ws_statistics",
        [],
        Array.from({ length: count }, (_, i) => `m${from + i}`),
      ),
    );

  it("are gathered for a table never ANALYZEd, and then each time 50 rows and 10% have changed", async () => {
    // PGlite forgets its change counts at a restart: a table never ANALYZEd does not wait for them.
    await insert(0, 1_000);
    expect(await statisticsRepo.analyzeChanged(store.db)).toContain("members");
    expect(await analyzedColumns(store.db)).toContain("id");
    const [members] = await store.db.$queryRaw<{ reltuples: number }[]>`
      SELECT reltuples::int AS reltuples FROM pg_class WHERE relname = 'members'`;
    expect(members?.reltuples).toBe(1_000);

    await insert(1_000, 140);
    expect(await statisticsRepo.analyzeChanged(store.db)).not.toContain("members");
    expect(await changesCounted(store.db)).toBe(140);

    await insert(1_140, 20);
    expect(await statisticsRepo.analyzeChanged(store.db)).toContain("members");
    expect(await changesCounted(store.db)).toBe(0);
  });

  it("are kept by the server as members are added", async ({ ws, server }) => {
    expect(await analyzedColumns(server.store.db)).toEqual([]);
    const audienceId = await createAudience(ws);
    await addMembers(ws, audienceId, { memberIds: Array.from({ length: 1_000 }, (_, i) => `m${i}`) });
    await expect.poll(() => analyzedColumns(server.store.db), { timeout: 30_000, interval: 500 }).toContain("id");
  });
});

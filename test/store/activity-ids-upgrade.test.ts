// Activities stored before their client ids had a table of their own (activity_ids) keep their
// ids through the upgrade: an ingest that sends one of them again counts it as a duplicate and
// stores it no second time. On the embedded store, and on PostgreSQL when TEST_DATABASE_URL is set.
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { activityReadRepo } from "../../src/features/activities/activity-read-repo.ts";
import { createActivityService } from "../../src/features/activities/activity-service.ts";
import { createIngestCheck } from "../../src/features/activities/ingest-check.ts";
import { activityRepo } from "../../src/features/membership/activity-repo.ts";
import { memberRepo } from "../../src/features/membership/member-repo.ts";
import { openStore, type Store } from "../../src/platform/db/database.ts";
import { applyMigrations, pgliteRunner, pgRunner, type SqlRunner } from "../../src/platform/db/migrate.ts";
import { openPglite } from "../../src/platform/db/pglite.ts";
import { createDatabase } from "../support/live-server.ts";
import { storeMembership } from "../support/store-membership.ts";

const MIGRATIONS = fileURLToPath(new URL("../../prisma/migrations/", import.meta.url));
const ACTIVITY_IDS = "20261212000000_activity_ids";
const WS = "ws_activity_ids";
const DAY = 86_400_000;
const NOW = Date.now();
const ago = (days: number) => new Date(NOW - days * DAY).toISOString();

/** A member and two of its activities (one with a client id), as the previous version stored them. */
const OLD_DATA = `
  INSERT INTO workspaces (workspace_id, name, member_seq) VALUES ('${WS}', 'Ids', 1);
  INSERT INTO members (workspace_id, id, seq, created_at, folded)
  VALUES ('${WS}', 'm1', 1, now(), '{"id": "m1", "email": null, "emails": [], "fields": {}}');
  INSERT INTO activity_types (workspace_id, type, count, last_at) VALUES ('${WS}', 'order.placed', 2, '${ago(1)}');
  INSERT INTO activities (workspace_id, member_seq, occurred_at, type_id, id)
  SELECT '${WS}', 1, v.at::timestamptz, t.type_id, v.id FROM activity_types AS t,
    (VALUES ('${ago(1)}', 'o1'), ('${ago(2)}', NULL)) AS v(at, id)
  WHERE t.workspace_id = '${WS}';
`;

/** A copy of prisma/migrations as it was before activity_ids. */
async function migrationsBefore(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "migrations-before-ids-"));
  for (const entry of await readdir(MIGRATIONS, { withFileTypes: true })) {
    if (entry.isDirectory() && entry.name < ACTIVITY_IDS)
      await cp(join(MIGRATIONS, entry.name), join(dir, entry.name), { recursive: true });
  }
  return dir;
}

/** Writes the old data with the old migrations; `open` applies the rest, as the service's start does. */
async function oldStore(kind: "embedded" | "postgres"): Promise<{ open(): Promise<Store>; cleanUp(): Promise<void> }> {
  const before = await migrationsBefore();
  const write = async (runner: SqlRunner) => {
    await applyMigrations(runner, before);
    await runner.exec(OLD_DATA);
  };
  try {
    if (kind === "embedded") {
      const dataDir = await mkdtemp(join(tmpdir(), "activity-ids-"));
      const lite = await openPglite(join(dataDir, "pglite"));
      await write(pgliteRunner(lite));
      await lite.close();
      return { open: () => openStore({ dataDir }), cleanUp: () => rm(dataDir, { recursive: true, force: true }) };
    }
    const database = await createDatabase(process.env.TEST_DATABASE_URL as string, "activity_ids_test");
    const pool = new pg.Pool({ connectionString: database.url, max: 1 });
    await write(pgRunner(pool));
    await pool.end();
    return { open: () => openStore({ databaseUrl: database.url, poolSize: 2 }), cleanUp: () => database.drop() };
  } finally {
    await rm(before, { recursive: true, force: true });
  }
}

const kinds: ("embedded" | "postgres")[] = ["embedded"];
if (process.env.TEST_DATABASE_URL) kinds.push("postgres");

describe.each(kinds)("client ids stored before activity_ids (%s)", { timeout: 60_000 }, (kind) => {
  let store: Store | undefined;
  let cleanUp: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await store?.close();
    await cleanUp?.();
  });

  it("are still found: a retry of one is a duplicate", async () => {
    const old = await oldStore(kind);
    cleanUp = old.cleanUp;
    store = await old.open();
    const activities = createActivityService({
      store,
      membership: storeMembership(store),
      members: memberRepo,
      activities: activityRepo,
      reads: activityReadRepo,
      check: createIngestCheck(),
      retentionDays: 400,
    });
    const entry = (id: string, days: number) => ({ id, memberId: "m1", type: "order.placed", occurredAt: ago(days) });
    expect(await activities.ingest(WS, { activities: [entry("o1", 1), entry("o2", 3)] })).toEqual({
      accepted: 1,
      duplicates: 1,
      expired: 0,
      createdMembers: 0,
    });
    expect((await activities.timeline(WS, "m1", {})).results.map((a) => a.id)).toEqual(["o1", null, "o2"]);
    expect((await activities.types(WS)).results.map((t) => [t.type, t.count])).toEqual([["order.placed", 3]]);
  });
});

// A store as an earlier version of the service left it: the migrations before a given one, then
// data written as that version wrote it. Upgrade tests open it, which applies the rest as the
// service's start does, and check that nothing was lost.
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { openStore, type Store } from "../../src/platform/db/database.ts";
import { applyMigrations, pgliteRunner, pgRunner, type SqlRunner } from "../../src/platform/db/migrate.ts";
import { openPglite } from "../../src/platform/db/pglite.ts";
import { createDatabase } from "./live-server.ts";

const MIGRATIONS = fileURLToPath(new URL("../../prisma/migrations/", import.meta.url));

/** Runs fn with a scratch copy of prisma/migrations as it was before the migration `before`. */
export async function withMigrationsBefore<T>(before: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "migrations-before-"));
  try {
    for (const entry of await readdir(MIGRATIONS, { withFileTypes: true })) {
      if (entry.isDirectory() && entry.name < before)
        await cp(join(MIGRATIONS, entry.name), join(dir, entry.name), { recursive: true });
    }
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export interface OldStore {
  /** Opens the upgraded store (applying the remaining migrations). */
  open(): Promise<Store>;
  cleanUp(): Promise<void>;
}

/**
 * Writes `data` (SQL) on the migrations before `before`, on the embedded store or on PostgreSQL
 * (TEST_DATABASE_URL, in a database named `name`).
 */
export function oldStore(
  kind: "embedded" | "postgres",
  { before, data, name }: { before: string; data: string; name: string },
): Promise<OldStore> {
  const write = (dir: string) => async (runner: SqlRunner) => {
    await applyMigrations(runner, dir);
    await runner.exec(data);
  };
  return withMigrationsBefore(before, async (dir) => {
    if (kind === "embedded") {
      const dataDir = await mkdtemp(join(tmpdir(), `${name}-`));
      const lite = await openPglite(join(dataDir, "pglite"));
      await write(dir)(pgliteRunner(lite));
      await lite.close();
      return { open: () => openStore({ dataDir }), cleanUp: () => rm(dataDir, { recursive: true, force: true }) };
    }
    const database = await createDatabase(process.env.TEST_DATABASE_URL as string, name);
    const pool = new pg.Pool({ connectionString: database.url, max: 1 });
    await write(dir)(pgRunner(pool));
    await pool.end();
    return { open: () => openStore({ databaseUrl: database.url, poolSize: 2 }), cleanUp: () => database.drop() };
  });
}

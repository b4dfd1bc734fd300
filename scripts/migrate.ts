// `npm run migrate`: brings the configured database up to date with prisma/migrations, the same way
// the service does at start. DATABASE_URL selects PostgreSQL; otherwise the embedded store in DATA_DIR.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { applyMigrations, pgliteRunner, pgRunner } from "../src/platform/db/migrate.ts";
import { openPglite } from "../src/platform/db/pglite.ts";

async function main(): Promise<string[]> {
  const databaseUrl = process.env.DATABASE_URL;
  if (databaseUrl) {
    const { default: pg } = await import("pg");
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
    try {
      return (await applyMigrations(pgRunner(pool))).applied;
    } finally {
      await pool.end();
    }
  }
  const dataPath = join(process.env.DATA_DIR || "./data", "pglite");
  await mkdir(dataPath, { recursive: true });
  const db = await openPglite(dataPath);
  try {
    return (await applyMigrations(pgliteRunner(db))).applied;
  } finally {
    await db.close();
  }
}

const target = process.env.DATABASE_URL
  ? "PostgreSQL at DATABASE_URL"
  : `embedded store in ${process.env.DATA_DIR || "./data"}`;
try {
  const applied = await main();
  if (applied.length === 0) console.log(`${target}: database is up to date`);
  else console.log(`${target}: applied ${applied.length} migration(s):\n${applied.map((n) => `  ${n}`).join("\n")}`);
} catch (error) {
  console.error(`migrate failed (${target}): ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}

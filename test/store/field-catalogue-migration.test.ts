// The field catalogue's migration must count the members a database already holds: a workspace
// upgraded with members in it lists exactly what they hold, and later writes go on from there.
import { randomBytes } from "node:crypto";
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { applyMigrations, pgliteRunner, pgRunner, type SqlRunner } from "../../src/platform/db/migrate.ts";
import { openPglite } from "../../src/platform/db/pglite.ts";

const MIGRATIONS = fileURLToPath(new URL("../../prisma/migrations/", import.meta.url));
const CATALOGUE = "20261212100000_field_catalogue";

async function withPglite(fn: (db: SqlRunner) => Promise<void>) {
  const db = await openPglite();
  try {
    await fn(pgliteRunner(db));
  } finally {
    await db.close();
  }
}

async function withPostgres(fn: (db: SqlRunner) => Promise<void>) {
  const serverUrl = process.env.TEST_DATABASE_URL as string;
  const name = `cat_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 2 });
  pool.on("error", () => {});
  try {
    await fn(pgRunner(pool));
  } finally {
    await pool.end();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

/** The migrations before the catalogue's, in a scratch directory. */
async function withEarlierMigrations(fn: (dir: string) => Promise<void>) {
  const dir = await mkdtemp(join(tmpdir(), "migrations-"));
  try {
    for (const entry of await readdir(MIGRATIONS, { withFileTypes: true })) {
      if (entry.isDirectory() && entry.name < CATALOGUE)
        await cp(join(MIGRATIONS, entry.name), join(dir, entry.name), { recursive: true });
    }
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const insertMember = (db: SqlRunner, workspaceId: string, seq: number, fields: Record<string, string>) =>
  db.query(`INSERT INTO members (workspace_id, id, seq, fields) VALUES ($1, $2, $3, $4::jsonb)`, [
    workspaceId,
    `m${seq}`,
    seq,
    JSON.stringify(fields),
  ]);

const catalogue = (db: SqlRunner) =>
  db.query<{ workspace: string; key: string; count: number; samples: string[] }>(
    `SELECT c.workspace_id AS workspace, c.key, c.member_count AS count,
       ARRAY(SELECT v.value FROM field_values AS v WHERE v.workspace_id = c.workspace_id AND v.key = c.key ORDER BY v.value) AS samples
     FROM field_catalogue AS c ORDER BY 1, 2`,
  );

const targets: [string, (fn: (db: SqlRunner) => Promise<void>) => Promise<void>][] = [["PGlite", withPglite]];
if (process.env.TEST_DATABASE_URL) targets.push(["PostgreSQL", withPostgres]);

describe.each(targets)("the field catalogue's migration on %s", { timeout: 60_000 }, (_name, withDatabase) => {
  it("counts the members already stored, per workspace, and later writes go on from there", async () => {
    await withDatabase(async (db) => {
      await withEarlierMigrations((dir) => applyMigrations(db, dir).then(() => undefined));
      await insertMember(db, "ws_a", 1, { plan: "pro", city: "" });
      await insertMember(db, "ws_a", 2, { plan: "free", city: "Oslo" });
      await insertMember(db, "ws_b", 1, { plan: "pro" });
      await applyMigrations(db);
      expect(await catalogue(db)).toEqual([
        { workspace: "ws_a", key: "city", count: 1, samples: ["Oslo"] },
        { workspace: "ws_a", key: "plan", count: 2, samples: ["free", "pro"] },
        { workspace: "ws_b", key: "plan", count: 1, samples: ["pro"] },
      ]);
      await db.query(`UPDATE members SET fields = '{"plan": "team"}' WHERE workspace_id = 'ws_a'`);
      await db.query(`DELETE FROM members WHERE workspace_id = 'ws_b'`);
      expect(await catalogue(db)).toEqual([{ workspace: "ws_a", key: "plan", count: 2, samples: ["team"] }]);
    });
  });
});

// The field catalogue in the store: its migration must count the members a database already holds
// (a workspace upgraded with members in it lists exactly what they hold, and later writes go on
// from there), and its triggers keep each key's list of values short without losing the smallest.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { applyMigrations, pgliteRunner, pgRunner, type SqlRunner } from "../../src/platform/db/migrate.ts";
import { openPglite } from "../../src/platform/db/pglite.ts";
import { withMigrationsBefore } from "../support/old-store.ts";

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
      await withMigrationsBefore(CATALOGUE, (dir) => applyMigrations(db, dir));
      await insertMember(db, "ws_a", 1, { plan: "pro", city: "" });
      await insertMember(db, "ws_a", 2, { plan: "free", city: "Oslo" });
      await insertMember(db, "ws_b", 1, { plan: "pro" });
      await db.query(
        `INSERT INTO members (workspace_id, id, seq, fields)
         SELECT 'ws_c', 'm' || g, g, jsonb_build_object('code', 'v' || lpad(g::text, 3, '0')) FROM generate_series(0, 149) AS g`,
      );
      await applyMigrations(db);
      // A key with more than 100 values lists its 100 smallest.
      expect(
        await db.query(`SELECT member_count AS count, values_bound AS bound,
          (SELECT count(*)::int FROM field_values WHERE workspace_id = 'ws_c') AS listed
          FROM field_catalogue WHERE workspace_id = 'ws_c'`),
      ).toEqual([{ count: 150, bound: "v099", listed: 100 }]);
      await db.query(`DELETE FROM members WHERE workspace_id = 'ws_c'`);
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

  it("lists a key's 100 smallest values past 200, and reads them again when fewer than 3 are left", async () => {
    await withDatabase(async (db) => {
      await applyMigrations(db);
      const code = (n: number) => `v${String(n).padStart(3, "0")}`;
      await db.query(
        `INSERT INTO members (workspace_id, id, seq, fields)
         SELECT 'ws_a', 'm' || g, g, jsonb_build_object('code', 'v' || lpad(g::text, 3, '0')) FROM generate_series(0, 249) AS g`,
      );
      const listed = async () =>
        (
          await db.query<{ count: number; bound: string | null; listed: number; first: string }>(
            `SELECT c.member_count AS count, c.values_bound AS bound,
               (SELECT count(*)::int FROM field_values AS v WHERE v.workspace_id = c.workspace_id AND v.key = c.key) AS listed,
               (SELECT min(v.value) FROM field_values AS v WHERE v.workspace_id = c.workspace_id AND v.key = c.key) AS first
             FROM field_catalogue AS c WHERE c.workspace_id = 'ws_a' AND c.key = 'code'`,
          )
        )[0];
      expect(await listed()).toEqual({ count: 250, bound: code(99), listed: 100, first: code(0) });
      // A value above the bound is counted and not listed.
      await db.query(
        `INSERT INTO members (workspace_id, id, seq, fields) VALUES ('ws_a', 'late', 999, '{"code": "w"}')`,
      );
      expect(await listed()).toEqual({ count: 251, bound: code(99), listed: 100, first: code(0) });
      // 98 of the 100 listed go: the 2 left are too few, and the 100 smallest are read again.
      await db.query(`DELETE FROM members WHERE workspace_id = 'ws_a' AND seq < 98`);
      expect(await listed()).toEqual({ count: 153, bound: code(197), listed: 100, first: code(98) });
      await db.query(`DELETE FROM members WHERE workspace_id = 'ws_a' AND seq = 98`);
      expect(await listed()).toEqual({ count: 152, bound: code(197), listed: 99, first: code(99) });
    });
  });
});

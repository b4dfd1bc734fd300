// prisma/migrations is what creates the database; prisma/schema.prisma is what the client is generated
// from. Nothing but this test keeps the two in step, because `prisma migrate dev` cannot run here.
import { createHash, randomBytes } from "node:crypto";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { applyMigrations, pgliteRunner, pgRunner, type SqlRunner } from "../../src/platform/db/migrate.ts";
import { openPglite as openLite } from "../../src/platform/db/pglite.ts";
import { compareFacts, databaseFacts, getDatamodel, schemaFacts } from "./schema-model.ts";

const MIGRATIONS = fileURLToPath(new URL("../../prisma/migrations/", import.meta.url));
const SCHEMA = fileURLToPath(new URL("../../prisma/schema.prisma", import.meta.url));
const INIT = "20261121000000_init";
const BITSETS = "20261123000000_membership_bitsets";
/** The migrations in prisma/migrations, in the order they apply. */
const migrationNames = async () =>
  (await readdir(new URL("../../prisma/migrations/", import.meta.url), { withFileTypes: true }))
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
const NO_DIFFERENCES = { onlyInSchema: [], onlyInDatabase: [] };
const expected = schemaFacts(getDatamodel(SCHEMA));

interface Database {
  runner: SqlRunner;
  close(): Promise<void>;
}

/** A fresh, empty database per test, so no test sees another's tables. */
async function withDatabase(open: () => Promise<Database>, fn: (runner: SqlRunner) => Promise<void>) {
  const db = await open();
  try {
    await fn(db.runner);
  } finally {
    await db.close();
  }
}

// Starting PGlite takes seconds; cloning an untouched instance gives an equally fresh one in a fraction.
let pristine: Promise<PGlite> | undefined;
afterAll(async () => (await pristine)?.close());

async function openPglite(): Promise<Database> {
  pristine ??= openLite();
  const db = (await (await pristine).clone()) as PGlite;
  return { runner: pgliteRunner(db), close: () => db.close() };
}

/** A database of its own on the TEST_DATABASE_URL server, dropped afterwards. */
async function openPostgres(): Promise<Database> {
  const serverUrl = process.env.TEST_DATABASE_URL as string;
  const name = `mig_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 2 });
  // DROP DATABASE … WITH (FORCE) terminates any connection still closing; that is expected here.
  pool.on("error", () => {});
  return {
    runner: pgRunner(pool),
    async close() {
      await pool.end();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/** A scratch copy of prisma/migrations, edited by `edit`, removed again after fn. */
async function withMigrationsCopy(edit: (dir: string) => Promise<void>, fn: (dir: string) => Promise<void>) {
  const dir = await mkdtemp(join(tmpdir(), "migrations-"));
  try {
    await cp(MIGRATIONS, dir, { recursive: true });
    await edit(dir);
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Edits a migration's SQL, failing if the text to replace is not there (a stale test). */
const editMigration = (name: string, from: string | RegExp, to: string) => async (dir: string) => {
  const file = join(dir, name, "migration.sql");
  const sql = await readFile(file, "utf8");
  const edited = sql.replace(from, to);
  if (edited === sql) throw new Error(`${String(from)} not found in ${name}/migration.sql`);
  await writeFile(file, edited);
};
const editInit = (from: string | RegExp, to: string) => editMigration(INIT, from, to);

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

const targets: [string, () => Promise<Database>][] = [["PGlite", openPglite]];
if (process.env.TEST_DATABASE_URL) targets.push(["PostgreSQL", openPostgres]);

describe.each(targets)("migrations on %s", { timeout: 60_000 }, (_name, open) => {
  it("create exactly the database prisma/schema.prisma describes", async () => {
    await withDatabase(open, async (db) => {
      await applyMigrations(db);
      expect(compareFacts(expected, await databaseFacts(db))).toEqual(NO_DIFFERENCES);
    });
  });

  it("are recorded with their files' checksums and applied only once", async () => {
    const names = (await readdir(MIGRATIONS, { withFileTypes: true }))
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    await withDatabase(open, async (db) => {
      expect(await applyMigrations(db)).toEqual({ applied: names });
      expect(await applyMigrations(db)).toEqual({ applied: [] });
      const rows = await db.query<Record<string, unknown>>(
        `SELECT migration_name, checksum, applied_steps_count, logs, rolled_back_at,
                finished_at >= started_at AS finished, length(id) AS id_length
         FROM _prisma_migrations ORDER BY migration_name`,
      );
      const files = await Promise.all(names.map((name) => readFile(join(MIGRATIONS, name, "migration.sql"), "utf8")));
      expect(rows).toEqual(
        names.map((name, i) => ({
          migration_name: name,
          checksum: sha256(files[i] as string),
          applied_steps_count: 1,
          logs: null,
          rolled_back_at: null,
          finished: true,
          id_length: 36,
        })),
      );
    });
  });

  it("refuse a migration that was modified after it was applied", async () => {
    await withMigrationsCopy(
      async () => {},
      async (dir) => {
        await withDatabase(open, async (db) => {
          await applyMigrations(db, dir);
          await editInit("-- CreateEnum", "-- CreateEnum (edited)")(dir);
          await expect(applyMigrations(db, dir)).rejects.toThrow(`migration ${INIT} was modified after it was applied`);
        });
      },
    );
  });

  it("roll back a failing migration completely and name it", async () => {
    const addBroken = async (dir: string) => {
      await mkdir(join(dir, "29990101000000_broken"));
      await writeFile(join(dir, "29990101000000_broken", "migration.sql"), "CREATE TABLE t (id int);\nSELECT 1 / 0;\n");
    };
    await withMigrationsCopy(addBroken, async (dir) => {
      await withDatabase(open, async (db) => {
        await expect(applyMigrations(db, dir)).rejects.toThrow(
          /migration 29990101000000_broken failed: division by zero/,
        );
        expect(await db.query("SELECT to_regclass('t') AS t")).toEqual([{ t: null }]);
        const recorded = await db.query<{ migration_name: string }>(
          "SELECT migration_name FROM _prisma_migrations ORDER BY migration_name",
        );
        expect(recorded.map((row) => row.migration_name)).toEqual(await migrationNames());
        // A failed run must not leave the lock or a transaction behind: the next run works.
        await rm(join(dir, "29990101000000_broken"), { recursive: true });
        expect(await applyMigrations(db, dir)).toEqual({ applied: [] });
      });
    });
  });

  it("stop at a migration Prisma recorded as failed", async () => {
    await withDatabase(open, async (db) => {
      await applyMigrations(db);
      await db.query("UPDATE _prisma_migrations SET finished_at = NULL");
      await expect(applyMigrations(db)).rejects.toThrow(/failed to apply earlier.*prisma migrate resolve/);
    });
  });

  // The comparison itself must be able to fail: break a scratch copy of the SQL and look for the diff.
  it.each([
    [
      "a missing index",
      editInit(/CREATE INDEX "members_workspace_id_created_at_id_idx".*\n/, ""),
      {
        onlyInSchema: ["index members_workspace_id_created_at_id_idx ON members (workspace_id, created_at, id)"],
        onlyInDatabase: [],
      },
    ],
    [
      "index columns in another order",
      editInit(`("workspace_id", "created_at", "id")`, `("workspace_id", "id", "created_at")`),
      {
        onlyInSchema: ["index members_workspace_id_created_at_id_idx ON members (workspace_id, created_at, id)"],
        onlyInDatabase: ["index members_workspace_id_created_at_id_idx ON members (workspace_id, id, created_at)"],
      },
    ],
    [
      "a nullable column",
      editInit(`"secret_hash" BYTEA NOT NULL`, `"secret_hash" BYTEA`),
      {
        onlyInSchema: ["column api_keys.secret_hash: bytea NOT NULL"],
        onlyInDatabase: ["column api_keys.secret_hash: bytea NULL"],
      },
    ],
    [
      "a column of another type",
      editInit(`"member_count" INTEGER`, `"member_count" BIGINT`),
      {
        onlyInSchema: ["column audiences.member_count: integer NOT NULL DEFAULT …"],
        onlyInDatabase: ["column audiences.member_count: bigint NOT NULL DEFAULT …"],
      },
    ],
    [
      "another enum value",
      editMigration(BITSETS, `'exclude', 'match'`, `'exclude', 'match', 'pending'`),
      {
        onlyInSchema: ["enum membership_kind (member, include, exclude, match)"],
        onlyInDatabase: ["enum membership_kind (member, include, exclude, match, pending)"],
      },
    ],
    [
      "another ON DELETE action",
      editInit(/("api_keys_workspace_id_fkey".*)ON DELETE CASCADE/, "$1ON DELETE RESTRICT"),
      {
        onlyInSchema: [expect.stringMatching(/^foreign key api_keys_workspace_id_fkey .* ON DELETE CASCADE/)],
        onlyInDatabase: [expect.stringMatching(/^foreign key api_keys_workspace_id_fkey .* ON DELETE RESTRICT/)],
      },
    ],
    [
      "a unique index that is not unique",
      editInit(
        `CREATE UNIQUE INDEX "audiences_workspace_id_name_key_key"`,
        `CREATE INDEX "audiences_workspace_id_name_key_key"`,
      ),
      {
        onlyInSchema: ["unique index audiences_workspace_id_name_key_key ON audiences (workspace_id, name_key)"],
        onlyInDatabase: ["index audiences_workspace_id_name_key_key ON audiences (workspace_id, name_key)"],
      },
    ],
  ])("detects %s", async (_what, edit, difference) => {
    await withMigrationsCopy(edit, async (dir) => {
      await withDatabase(open, async (db) => {
        await applyMigrations(db, dir);
        const diff = compareFacts(expected, await databaseFacts(db));
        expect(diff).toEqual(difference);
        expect(diff).not.toEqual(NO_DIFFERENCES);
      });
    });
  });
});

// Applies prisma/migrations the way `prisma migrate deploy` does, because Prisma's native schema
// engine cannot be downloaded everywhere this service runs. Everything is recorded in
// _prisma_migrations exactly as Prisma records it, so `prisma migrate status/deploy` keep working
// for anyone who does have the engine.
import { createHash, randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { PGlite } from "@electric-sql/pglite";
import type { Pool, PoolClient, QueryResultRow } from "pg";
import { PROJECT_ROOT } from "../project-root.ts";

export interface SqlRunner {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs a script without parameters; it may hold several statements. */
  exec(sql: string): Promise<void>;
  /**
   * Runs fn with a runner pinned to one connection. A transaction (BEGIN … COMMIT) only means
   * something on a single connection; runners that only have one omit this.
   */
  session?<T>(fn: (runner: SqlRunner) => Promise<T>): Promise<T>;
}

export function pgRunner(client: Pool | PoolClient): SqlRunner {
  const runner: SqlRunner = {
    async query<T>(sql: string, params?: unknown[]) {
      return (await client.query<QueryResultRow>(sql, params)).rows as T[];
    },
    async exec(sql) {
      // Without parameters pg uses the simple query protocol, which accepts several statements.
      await client.query(sql);
    },
  };
  if ("release" in client) return runner; // already a single checked-out connection
  runner.session = async (fn) => {
    const connection = await client.connect();
    let failed = true;
    try {
      const result = await fn(pgRunner(connection));
      failed = false;
      return result;
    } finally {
      // After a failure the connection is destroyed, not pooled: that also drops an open
      // transaction the error may have left behind.
      connection.release(failed);
    }
  };
  return runner;
}

export function pgliteRunner(db: PGlite): SqlRunner {
  // PGlite has a single connection, so no session() is needed.
  return {
    async query<T>(sql: string, params?: unknown[]) {
      return (await db.query<T>(sql, params)).rows;
    },
    async exec(sql) {
      await db.exec(sql);
    },
  };
}

// The lock id and table definition are the ones Prisma's PostgreSQL schema engine uses, so this
// runner and `prisma migrate deploy` exclude each other and share one history table.
const PRISMA_LOCK_ID = 72707369;
const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS _prisma_migrations (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             TIMESTAMPTZ,
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          TIMESTAMPTZ,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_steps_count     INTEGER NOT NULL DEFAULT 0
)`;

export async function applyMigrations(
  runner: SqlRunner,
  migrationsDir: string | URL = join(PROJECT_ROOT, "prisma", "migrations"),
): Promise<{ applied: string[] }> {
  const dir = migrationsDir instanceof URL ? fileURLToPath(migrationsDir) : migrationsDir;
  // Prisma sorts migration directories by name; the timestamp prefix makes that chronological.
  const names = (await readdir(dir, { withFileTypes: true }))
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  const scripts = await Promise.all(names.map((name) => readFile(join(dir, name, "migration.sql"), "utf8")));
  const run = (r: SqlRunner) => migrate(r, names, scripts);
  return runner.session ? runner.session(run) : run(runner);
}

/**
 * Applies the pending migrations one transaction each. Every transaction first takes Prisma's
 * migration lock, transaction-scoped (so it is released by COMMIT or ROLLBACK, also through
 * PgBouncer in transaction mode, where a session lock could stay behind on a pooled server
 * connection), then reads the history again: a second process waits, then finds nothing left.
 */
async function migrate(runner: SqlRunner, names: string[], scripts: string[]): Promise<{ applied: string[] }> {
  const applied: string[] = [];
  for (;;) {
    let name: string | undefined;
    try {
      await runner.exec("BEGIN");
      await runner.query(`SELECT pg_advisory_xact_lock(${PRISMA_LOCK_ID})`);
      const next = await nextPending(runner, names, scripts);
      if (next === undefined) {
        await runner.exec("COMMIT");
        return { applied };
      }
      name = names[next] as string;
      const script = scripts[next] as string;
      await runner.exec(script);
      // now() is the transaction's start, clock_timestamp() the moment the script finished.
      await runner.query(
        `INSERT INTO _prisma_migrations (id, checksum, finished_at, migration_name, logs, rolled_back_at, started_at, applied_steps_count)
         VALUES ($1, $2, clock_timestamp(), $3, NULL, NULL, now(), 1)`,
        [randomUUID(), sha256(script), name],
      );
      await runner.exec("COMMIT");
      applied.push(name);
    } catch (error) {
      // Unlike Prisma (which records a failed row and may leave the script half-done), the script
      // and its record share one transaction, so a failure leaves the database exactly as it was.
      await runner.exec("ROLLBACK").catch(() => {});
      if (name === undefined) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`migration ${name} failed: ${reason}`, { cause: error });
    }
  }
}

/** The index of the first migration not applied yet, after checking the recorded history. */
async function nextPending(runner: SqlRunner, names: string[], scripts: string[]): Promise<number | undefined> {
  await runner.exec(CREATE_MIGRATIONS_TABLE);
  type Row = { migration_name: string; checksum: string; finished_at: unknown; rolled_back_at: unknown };
  const rows = await runner.query<Row>(
    "SELECT migration_name, checksum, finished_at, rolled_back_at FROM _prisma_migrations",
  );
  // Same rule as `prisma migrate deploy`: an unfinished, not rolled back migration blocks everything.
  const failed = rows.find((row) => row.finished_at == null && row.rolled_back_at == null);
  if (failed) {
    const name = failed.migration_name;
    throw new Error(
      `migration ${name} failed to apply earlier and the database may be half-migrated; repair it by hand, ` +
        `then mark the migration resolved (\`prisma migrate resolve --applied ${name}\` or \`--rolled-back ${name}\`)`,
    );
  }
  // Rolled-back records do not count as applied: Prisma applies such a migration again. Records
  // without a directory are ignored, as Prisma does.
  const recorded = new Map(rows.filter((row) => row.rolled_back_at == null).map((row) => [row.migration_name, row]));
  // Check every recorded migration before applying anything, so a bad history changes nothing.
  names.forEach((name, i) => {
    const row = recorded.get(name);
    if (row && !checksumMatches(scripts[i] as string, row.checksum)) {
      throw new Error(`migration ${name} was modified after it was applied`);
    }
  });
  const next = names.findIndex((name) => !recorded.has(name));
  return next === -1 ? undefined : next;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** Prisma's comparison: tolerant of git's line-ending conversion and of its old unpadded hex format. */
function checksumMatches(script: string, checksum: string): boolean {
  return [script, script.replaceAll("\r\n", "\n"), script.replaceAll("\n", "\r\n")].some((variant) => {
    const digest = createHash("sha256").update(variant).digest();
    const hex = checksum.length === 64 ? digest.toString("hex") : [...digest].map((b) => b.toString(16)).join("");
    return hex === checksum;
  });
}

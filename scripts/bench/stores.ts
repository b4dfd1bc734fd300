// The run's two stores (the service's, and the raw baseline's beside it) and what is undone at
// the end of the run, whatever happens.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import pg from "pg";
import { statisticsChecked } from "./http.ts";
import type { BenchOptions } from "./options.ts";
import { openPgliteRaw, openPgRaw, type RawDb } from "./raw.ts";

export const log = (message: string) =>
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

/** Undone in reverse order at the end, whatever happens. */
export const cleanups: (() => Promise<unknown>)[] = [];
export async function cleanUp(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) {
    await cleanup().catch((error: unknown) => log(`cleanup: ${(error as Error).message}`));
  }
}

const withDatabase = (url: string, database: string) => {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
};

export interface Stores {
  rawDatabaseUrl?: string;
  /** Opens the raw baseline's database (run while the service starts). */
  openRaw(): Promise<RawDb>;
  serviceSettings: { databaseUrl?: string; dataDir?: string };
  /** Brings both stores' planner statistics up to date; serviceUrl is the service's address now. */
  analyze(serviceUrl: string): Promise<void>;
  describe: string;
  /** The same without this run's names and paths: for the results, and the docs rendered from them. */
  settings: string;
}

export async function openStores(opts: BenchOptions): Promise<Stores> {
  if (opts.store === "postgres") {
    const adminUrl = opts.databaseUrl as string;
    if (!["127.0.0.1", "localhost", "[::1]"].includes(new URL(adminUrl).hostname)) {
      throw new Error("the benchmark only targets a PostgreSQL server on this machine (127.0.0.1)");
    }
    const admin = new pg.Pool({ connectionString: adminUrl, max: 1 });
    admin.on("error", () => {});
    cleanups.push(() => admin.end());
    const name = `bench_${randomBytes(5).toString("hex")}`;
    for (const database of [name, `${name}_raw`]) {
      await admin.query(`CREATE DATABASE ${database}`);
      if (opts.keep) log(`keeping database ${database} (--keep)`);
      else cleanups.push(() => admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
    }
    const serviceUrl = withDatabase(adminUrl, name);
    const service = new pg.Pool({ connectionString: serviceUrl, max: 1 });
    service.on("error", () => {});
    cleanups.push(() => service.end());
    const [version] = (
      await admin.query<{ v: string; settings: string }>(
        `SELECT current_setting('server_version') AS v, concat_ws(', ',
           'autovacuum=' || current_setting('autovacuum'), 'shared_buffers=' || current_setting('shared_buffers'),
           'work_mem=' || current_setting('work_mem'), 'max_wal_size=' || current_setting('max_wal_size'),
           'synchronous_commit=' || current_setting('synchronous_commit')) AS settings`,
      )
    ).rows;
    let raw: RawDb | undefined;
    return {
      async openRaw() {
        raw = await openPgRaw(withDatabase(adminUrl, `${name}_raw`));
        cleanups.push(() => (raw as RawDb).close());
        return raw;
      },
      serviceSettings: { databaseUrl: serviceUrl },
      rawDatabaseUrl: withDatabase(adminUrl, `${name}_raw`),
      analyze: async () => {
        await Promise.all([raw?.query("ANALYZE"), service.query("ANALYZE")]);
      },
      describe: `PostgreSQL ${version?.v} (${version?.settings}; databases ${name}, ${name}_raw)`,
      settings: `PostgreSQL ${version?.v} (${version?.settings})`,
    };
  }
  const dir = await mkdtemp(join(os.tmpdir(), "audience-bench-"));
  if (opts.keep) log(`keeping ${dir} (--keep)`);
  else cleanups.push(() => rm(dir, { recursive: true, force: true }));
  let raw: RawDb | undefined;
  return {
    async openRaw() {
      raw = await openPgliteRaw(join(dir, "raw"));
      cleanups.push(() => (raw as RawDb).close());
      return raw;
    },
    serviceSettings: { dataDir: join(dir, "service") },
    // PGlite has no autovacuum. The service's embedded store keeps its statistics itself, checking
    // every few seconds: the benchmark waits for two of its checks, as it would wait for
    // autovacuum on PostgreSQL. The raw baseline is ANALYZEd directly.
    analyze: async (serviceUrl) => {
      await raw?.query("ANALYZE");
      await statisticsChecked(serviceUrl, 2);
    },
    describe: `embedded PGlite (server DATA_DIR ${join(dir, "service")}, raw baseline in-process)`,
    settings:
      "embedded PGlite (the server in a temporary DATA_DIR, started with the glibc settings of operations.md's systemd unit; the raw baseline in-process)",
  };
}

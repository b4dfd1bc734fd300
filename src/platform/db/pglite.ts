import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { join } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { PROJECT_ROOT } from "../project-root.ts";
import { embeddedOptions } from "./embedded-settings.ts";

/**
 * Opens the embedded PostgreSQL (in memory without a path) with its memory settings
 * (embedded-settings.ts) and the extensions the migrations use: pg_trgm, whose trigram index makes
 * member search fast. Every embedded database the service, its scripts and its tests open comes
 * from here, so none lacks a setting or an extension. Loaded on demand: a server on PostgreSQL
 * never needs PGlite. With a template (a dump of another embedded database), the new in-memory
 * database starts as a copy of it. A directory with no database yet gets one from createDataDir
 * first.
 */
export async function openPglite(dataPath?: string, template?: Blob): Promise<PGlite> {
  if (dataPath !== undefined) await createDataDir(dataPath);
  return startPglite(dataPath, template);
}

/**
 * Opens the database at dataPath again, in the same process (pglite-recycling.ts): never a new
 * one, since a directory gone missing while the store ran is a fault, not a first start.
 */
export async function reopenPglite(dataPath: string): Promise<PGlite> {
  if (!existsSync(join(dataPath, "PG_VERSION")))
    throw Object.assign(new Error(`${dataPath} holds no database`), { code: "ENOENT" });
  return startPglite(dataPath);
}

async function startPglite(dataPath?: string, template?: Blob): Promise<PGlite> {
  const [{ PGlite }, { pg_trgm }] = await Promise.all([
    import("@electric-sql/pglite"),
    import("@electric-sql/pglite/contrib/pg_trgm"),
  ]);
  return PGlite.create(dataPath, {
    ...embeddedOptions(PGlite.defaultStartParams),
    extensions: { pg_trgm },
    ...(template === undefined ? {} : { loadDataDir: template }),
  });
}

const INITDB_SCRIPT = join(PROJECT_ROOT, "src", "platform", "db", "pglite-initdb.mjs");

/**
 * Makes a new database at dataPath unless it holds one, in a process of its own. PGlite's initdb
 * runs a second PostgreSQL beside the first, each in a WebAssembly memory of at least 128 MB that
 * never shrinks: a server that made its data directory itself would keep that memory for good.
 * The database
 * is made beside dataPath and renamed into place once whole, so that a creation cut short
 * leaves nothing that looks like a database.
 */
async function createDataDir(dataPath: string): Promise<void> {
  if (existsSync(join(dataPath, "PG_VERSION"))) return;
  const { PGlite } = await import("@electric-sql/pglite");
  const making = `${dataPath}.new`;
  await rm(making, { recursive: true, force: true });
  try {
    await runInitdb(making, embeddedOptions(PGlite.defaultStartParams));
    // No PG_VERSION: a creation cut short before creations were made beside it.
    await rm(dataPath, { recursive: true, force: true });
    await rename(making, dataPath);
  } catch (error) {
    await rm(making, { recursive: true, force: true }).catch(() => {});
    throw error;
  }
}

/** Runs pglite-initdb.mjs; rejects with its error (code, errno and message, as PGlite gave them). */
function runInitdb(dataPath: string, options: object): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [INITDB_SCRIPT, dataPath, JSON.stringify(options)], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (text: string) => {
      stderr = (stderr + text).slice(-16_384);
    });
    child.on("error", reject);
    child.on("close", (exitCode, signal) => {
      if (exitCode === 0) return resolve();
      const last = stderr.trim().split("\n").at(-1) ?? "";
      try {
        const { code, errno, message } = JSON.parse(last) as { code?: string; errno?: number; message: string };
        reject(Object.assign(new Error(message), { code, errno }));
      } catch {
        reject(new Error(`creating the database ended with ${signal ?? `exit code ${exitCode}`}: ${last}`));
      }
    });
  });
}

import type { PGlite } from "@electric-sql/pglite";
import { embeddedOptions } from "./embedded-settings.ts";

/**
 * Opens the embedded PostgreSQL (in memory without a path) with its memory settings
 * (embedded-settings.ts) and the extensions the migrations use: pg_trgm, whose trigram index makes
 * member search fast. Every embedded database the service, its scripts and its tests open comes
 * from here, so none lacks a setting or an extension. Loaded on demand: a server on PostgreSQL
 * never needs PGlite. With a template (a dump of another embedded database), the new in-memory
 * database starts as a copy of it.
 */
export async function openPglite(dataPath?: string, template?: Blob): Promise<PGlite> {
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

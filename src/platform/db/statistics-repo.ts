import type { SqlClient } from "./sql-client.ts";

/**
 * Planner statistics for the embedded store. PostgreSQL's autovacuum ANALYZEs a table once enough
 * of its rows have changed; PGlite runs no autovacuum, so without this the embedded store would
 * plan every query with no statistics at all. The threshold is autovacuum's own: 50 rows plus 10%
 * of the table. PGlite does not keep its change counts across a restart, so a table never
 * ANALYZEd (reltuples -1) is ANALYZEd whatever its count says.
 */
export const statisticsRepo = {
  /** ANALYZEs each table changed past the threshold since its last ANALYZE; returns their names. */
  async analyzeChanged(db: SqlClient): Promise<string[]> {
    // The session's own counts reach pg_stat_user_tables at most once a second, after a
    // statement: this makes the next flush happen now, so the check sees every committed change.
    await db.$executeRaw`SELECT pg_stat_force_next_flush()`;
    const tables = await db.$queryRaw<{ name: string; quoted: string }[]>`
      SELECT s.relname AS name, format('%I.%I', s.schemaname, s.relname) AS quoted
      FROM pg_stat_user_tables AS s JOIN pg_class AS c ON c.oid = s.relid
      WHERE c.reltuples < 0 OR s.n_mod_since_analyze > 50 + 0.1 * greatest(c.reltuples, 0)
      ORDER BY s.relname`;
    // One table at a time: the embedded store runs one statement at a time, and each ANALYZE
    // reads a sample of at most 30,000 rows, so requests wait for one sample, not all of them.
    // The names are the catalog's own, quoted by format('%I').
    for (const table of tables) await db.$executeRawUnsafe(`ANALYZE ${table.quoted}`);
    return tables.map((table) => table.name);
  },
};

export type StatisticsRepo = typeof statisticsRepo;

import { expect } from "vitest";
import type { Store } from "../../src/platform/db/database.ts";

/** Row count and an MD5 of every row (as text, in a stable order), per table. */
export type DbState = Record<string, { rows: number; md5: string }>;

/**
 * The rate limiter counts every request of an API key, accepted or refused, by design (on
 * PostgreSQL in this table): request bookkeeping, not data a request may or may not change.
 */
export const RATE_LIMIT_TABLE = "rate_limit_buckets";

/**
 * Every table of the service (what the migrations created, so a new table is covered the day it
 * is added), except the migrations ledger and partitions (counted in their parent).
 */
async function tablesOf(store: Store): Promise<Array<{ name: string; scoped: boolean }>> {
  const rows = await store.db.$queryRawUnsafe<Array<{ name: string; scoped: boolean }>>(
    `SELECT t.table_name AS name,
            EXISTS (SELECT 1 FROM information_schema.columns c
                    WHERE c.table_schema = t.table_schema AND c.table_name = t.table_name
                      AND c.column_name = 'workspace_id') AS scoped
     FROM information_schema.tables t
     WHERE t.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
       AND t.table_name <> '_prisma_migrations'
       -- A partition's rows are its parent's (activities): the months the purge creates ahead
       -- at any moment are the store's housekeeping, not a change of anyone's data.
       AND NOT (SELECT c.relispartition FROM pg_class c
                WHERE c.oid = format('%I.%I', t.table_schema, t.table_name)::regclass)
     ORDER BY t.table_name`,
  );
  if (rows.length < 7) throw new Error(`expected the service's tables, found ${rows.map((r) => r.name).join(", ")}`);
  return rows;
}

/**
 * Waits until the relay has published every event written so far: it does so just after each
 * write commits, in the background, so a snapshot taken meanwhile would see it still at work.
 * Member chunks count as pending too: the relay deletes them with their entry (no foreign key
 * does), and one left behind would keep this waiting.
 */
export async function publishedAll(store: Store): Promise<void> {
  const pending = async () =>
    (
      await store.db.$queryRawUnsafe<Array<{ n: number }>>(
        "SELECT ((SELECT count(*) FROM event_outbox) + (SELECT count(*) FROM event_outbox_members))::int AS n",
      )
    )[0]?.n;
  await expect.poll(pending, { timeout: 20_000, interval: 20 }).toBe(0);
}

/**
 * Reads the whole store (or one workspace's rows of it: a table without workspace_id is then
 * read whole) in one statement, once every event written so far is published: any write, even
 * one that only touches updated_at, changes it. Rate-limit counters are left out unless asked for.
 */
export async function snapshotDb(
  store: Store,
  { workspaceId, withRateLimits = false }: { workspaceId?: string; withRateLimits?: boolean } = {},
): Promise<DbState> {
  await publishedAll(store);
  const tables = (await tablesOf(store)).filter((t) => withRateLimits || t.name !== RATE_LIMIT_TABLE);
  const parts = tables.map(({ name, scoped }) => {
    const where = workspaceId !== undefined && scoped ? "WHERE t.workspace_id = $1" : "";
    const ident = `"${name.replaceAll('"', '""')}"`;
    return `'${name}', (SELECT json_build_array(count(*)::int, md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')))
                       FROM ${ident} AS t ${where})`;
  });
  const sql = `SELECT json_build_object(${parts.join(", ")})::text AS state`;
  const params = workspaceId === undefined ? [] : [workspaceId];
  const [row] = await store.db.$queryRawUnsafe<Array<{ state: string }>>(sql, ...params);
  const raw = JSON.parse(row?.state ?? "{}") as Record<string, [number, string]>;
  return Object.fromEntries(Object.entries(raw).map(([name, [rows, md5]]) => [name, { rows, md5 }]));
}

/** The tables whose rows differ between two snapshots, described for a failure message. */
export function diffDb(before: DbState, after: DbState): string[] {
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return names
    .filter((name) => before[name]?.md5 !== after[name]?.md5 || before[name]?.rows !== after[name]?.rows)
    .map((name) => `${name}: ${before[name]?.rows ?? "-"} rows -> ${after[name]?.rows ?? "-"} rows (content changed)`);
}

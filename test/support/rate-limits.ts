import type { Store } from "../../src/platform/db/database.ts";

/**
 * The requests of a workspace's API keys in the current window as the PostgreSQL database holds
 * them (rate_limit_buckets): a server process adds its own counts there every 0.1 s, so a test
 * can await the moment a process has reported instead of sleeping.
 */
export async function reportedRequests(store: Store, workspaceId: string): Promise<number> {
  const [row] = await store.db.$queryRaw<{ total: number }[]>`
    SELECT coalesce(sum(count), 0)::int AS total FROM rate_limit_buckets WHERE workspace_id = ${workspaceId}`;
  return row?.total ?? 0;
}

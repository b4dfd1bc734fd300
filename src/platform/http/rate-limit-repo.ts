import type { SqlClient } from "../db/sql-client.ts";

/** Requests one process counted for an API key in one window, to add to the shared count. */
export interface CountBatch {
  workspaceId: string;
  keyId: string;
  windowStart: Date;
  count: number;
}

/** Fixed-window request counts per API key, shared by every server process (rate_limit_buckets). */
export const rateLimitRepo = {
  /**
   * Adds the counts to the keys' current windows (a newer window starts again from its count) in
   * one statement for all keys, and returns the totals, which include other processes' requests.
   */
  addCounts(db: SqlClient, batch: CountBatch[]): Promise<CountBatch[]> {
    return db.$queryRaw<CountBatch[]>`
      INSERT INTO rate_limit_buckets (workspace_id, key_id, window_start, count)
      SELECT * FROM unnest(${batch.map((b) => b.workspaceId)}::text[], ${batch.map((b) => b.keyId)}::text[],
                           ${batch.map((b) => b.windowStart.toISOString())}::timestamptz[],
                           ${batch.map((b) => b.count)}::int[])
      ON CONFLICT (workspace_id, key_id) DO UPDATE SET
        count = CASE WHEN rate_limit_buckets.window_start = EXCLUDED.window_start
                     THEN rate_limit_buckets.count + EXCLUDED.count ELSE EXCLUDED.count END,
        window_start = EXCLUDED.window_start
      RETURNING workspace_id AS "workspaceId", key_id AS "keyId", window_start AS "windowStart", count`;
  },
};

export type RateLimitRepo = typeof rateLimitRepo;

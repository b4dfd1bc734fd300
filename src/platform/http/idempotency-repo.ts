import type { SqlClient } from "../db/sql-client.ts";

export interface IdempotencyScope {
  workspaceId: string;
  keyId: string;
  key: string;
}

export type Claim =
  | { state: "claimed" }
  | { state: "replay"; statusCode: number; contentType: string | null; body: string | null }
  | { state: "mismatch" }
  | { state: "running" };

/** How long a kept response can be replayed, and after how long an unfinished claim is abandoned. */
export const KEEP_HOURS = 24;
export const ABANDONED_AFTER_SECONDS = 300;

/** Idempotency keys: claimed before a request executes, completed with its response afterwards. */
export const idempotencyRepo = {
  /** Claims the key for this request, or says what became of the request that claimed it first. */
  async claim(db: SqlClient, scope: IdempotencyScope, requestHash: string): Promise<Claim> {
    const { workspaceId, keyId, key } = scope;
    // An expired key, or a claim whose request died unfinished, is free again.
    await db.$executeRaw`
      DELETE FROM idempotency_keys
      WHERE workspace_id = ${workspaceId} AND key_id = ${keyId} AND idempotency_key = ${key}
        AND (created_at < now() - make_interval(hours => ${KEEP_HOURS}::int)
             OR (completed_at IS NULL AND created_at < now() - make_interval(secs => ${ABANDONED_AFTER_SECONDS}::int)))`;
    const claimed = await db.$queryRaw<{ claimed: number }[]>`
      INSERT INTO idempotency_keys (workspace_id, key_id, idempotency_key, request_hash)
      VALUES (${workspaceId}, ${keyId}, ${key}, ${requestHash})
      ON CONFLICT DO NOTHING
      RETURNING 1 AS claimed`;
    if (claimed.length > 0) return { state: "claimed" };
    const [row] = await db.$queryRaw<
      { requestHash: string; statusCode: number | null; contentType: string | null; body: string | null }[]
    >`
      SELECT request_hash AS "requestHash", status_code AS "statusCode", content_type AS "contentType",
             response_body AS body
      FROM idempotency_keys
      WHERE workspace_id = ${workspaceId} AND key_id = ${keyId} AND idempotency_key = ${key}`;
    if (!row) return this.claim(db, scope, requestHash); // released meanwhile: try again
    if (row.requestHash !== requestHash) return { state: "mismatch" };
    if (row.statusCode === null) return { state: "running" };
    return { state: "replay", statusCode: row.statusCode, contentType: row.contentType, body: row.body };
  },

  async complete(
    db: SqlClient,
    scope: IdempotencyScope,
    response: { statusCode: number; contentType: string | null; body: string | null },
  ) {
    await db.$executeRaw`
      UPDATE idempotency_keys
      SET status_code = ${response.statusCode}::int, content_type = ${response.contentType},
          response_body = ${response.body}, completed_at = now()
      WHERE workspace_id = ${scope.workspaceId} AND key_id = ${scope.keyId} AND idempotency_key = ${scope.key}`;
  },

  /** Forgets a claim, so that the same key can be used again (after a 5xx). */
  async release(db: SqlClient, scope: IdempotencyScope) {
    await db.$executeRaw`
      DELETE FROM idempotency_keys
      WHERE workspace_id = ${scope.workspaceId} AND key_id = ${scope.keyId} AND idempotency_key = ${scope.key}`;
  },

  /** Drops every kept response older than the replay window. */
  async purgeExpired(db: SqlClient): Promise<number> {
    return db.$executeRaw`
      DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => ${KEEP_HOURS}::int)`;
  },
};

export type IdempotencyRepo = typeof idempotencyRepo;

import { Prisma } from "../../../generated/prisma/client.ts";
import type { Position } from "../../domain/cursor.ts";
import type { Tx } from "../../platform/db/database.ts";
import { PLANNED_PER_RUN } from "../../platform/db/prepared-statements.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";

type Reader = SqlClient;

export interface WebhookRow {
  id: string;
  url: string;
  types: string[] | null;
  audienceIds: string[] | null;
  description: string;
  enabled: boolean;
  disabledReason: string | null;
  failingSince: Date | null;
  createdAt: Date;
}

export interface DeliveryRow {
  id: string;
  eventId: string;
  eventType: string;
  sequence: number;
  status: "pending" | "succeeded" | "failed";
  attempts: number;
  lastAttemptAt: Date | null;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: Date | null;
  createdAt: Date;
}

/** What one attempt came to. */
export interface AttemptOutcome {
  workspaceId: string;
  id: string;
  webhookId: string;
  status: "pending" | "succeeded" | "failed";
  statusCode: number | null;
  error: string | null;
  /** When the next attempt is due (pending only). */
  nextAttemptAt: Date | null;
  /** The receiver answered 410 Gone: the webhook is disabled at once. */
  gone: boolean;
}

/** A delivery claimed for an attempt: where it goes, its signing secrets and its body. */
export interface ClaimedDelivery {
  workspaceId: string;
  id: string;
  webhookId: string;
  eventId: string;
  attempts: number;
  createdAt: Date;
  url: string;
  secrets: string[];
  /** The event as JSON; null when the feed no longer keeps it. */
  body: string | null;
}

const WEBHOOK_COLUMNS = Prisma.raw(`id, url, types, audience_ids AS "audienceIds", description, enabled,
  disabled_reason AS "disabledReason", failing_since AS "failingSince", created_at AS "createdAt"`);

const DELIVERY_COLUMNS = Prisma.raw(`d.id, d.event_id AS "eventId", d.event_type AS "eventType",
  d.event_sequence::float8 AS sequence, d.status, d.attempts, d.last_attempt_at AS "lastAttemptAt",
  d.last_status_code AS "lastStatusCode", d.last_error AS "lastError", d.next_attempt_at AS "nextAttemptAt",
  d.created_at AS "createdAt"`);

export const webhookRepo = {
  async count(tx: Tx, workspaceId: string): Promise<number> {
    const [row] = await tx.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM webhooks WHERE workspace_id = ${workspaceId}`;
    return row?.n ?? 0;
  },

  async create(
    tx: Tx,
    workspaceId: string,
    webhook: Pick<WebhookRow, "id" | "url" | "types" | "audienceIds" | "description" | "enabled"> & { secret: string },
  ): Promise<WebhookRow> {
    const [row] = await tx.$queryRaw<WebhookRow[]>`
      INSERT INTO webhooks (workspace_id, id, url, types, audience_ids, description, enabled, disabled_reason, secret)
      VALUES (${workspaceId}, ${webhook.id}, ${webhook.url}, ${webhook.types}::text[], ${webhook.audienceIds}::text[],
              ${webhook.description}, ${webhook.enabled}, ${webhook.enabled ? null : "manual"}, ${webhook.secret})
      RETURNING ${WEBHOOK_COLUMNS}`;
    return row as WebhookRow;
  },

  list(db: Reader, workspaceId: string): Promise<WebhookRow[]> {
    return db.$queryRaw<WebhookRow[]>`
      SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE workspace_id = ${workspaceId} ORDER BY created_at, id`;
  },

  async find(db: Reader, workspaceId: string, id: string): Promise<WebhookRow | undefined> {
    const [row] = await db.$queryRaw<WebhookRow[]>`
      SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE workspace_id = ${workspaceId} AND id = ${id}`;
    return row;
  },

  /** Reads the webhook and locks it for a change. */
  async lock(tx: Tx, workspaceId: string, id: string): Promise<WebhookRow | undefined> {
    const [row] = await tx.$queryRaw<WebhookRow[]>`
      SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE workspace_id = ${workspaceId} AND id = ${id} FOR UPDATE`;
    return row;
  },

  /** Writes a changed webhook; enabling it clears why it was disabled and its failing streak. */
  async update(
    tx: Tx,
    workspaceId: string,
    webhook: Omit<WebhookRow, "createdAt" | "failingSince">,
  ): Promise<WebhookRow> {
    const [row] = await tx.$queryRaw<WebhookRow[]>`
      UPDATE webhooks SET url = ${webhook.url}, types = ${webhook.types}::text[], audience_ids = ${webhook.audienceIds}::text[],
        description = ${webhook.description}, enabled = ${webhook.enabled}, disabled_reason = ${webhook.disabledReason},
        failing_since = CASE WHEN ${webhook.enabled} AND NOT enabled THEN NULL ELSE failing_since END, updated_at = now()
      WHERE workspace_id = ${workspaceId} AND id = ${webhook.id}
      RETURNING ${WEBHOOK_COLUMNS}`;
    return row as WebhookRow;
  },

  async delete(tx: Reader, workspaceId: string, id: string): Promise<boolean> {
    return (await tx.$executeRaw`DELETE FROM webhooks WHERE workspace_id = ${workspaceId} AND id = ${id}`) > 0;
  },

  /** Replaces the secret; the previous one still signs until `previousUntil`. */
  async rotate(tx: Tx, workspaceId: string, id: string, secret: string, previousUntil: Date): Promise<void> {
    await tx.$executeRaw`
      UPDATE webhooks SET previous_secret = secret, previous_secret_until = ${previousUntil}, secret = ${secret}, updated_at = now()
      WHERE workspace_id = ${workspaceId} AND id = ${id}`;
  },

  /** Queues a delivery of an event that is not in the feed (a test), with its body. */
  async queueTest(
    tx: Tx,
    workspaceId: string,
    delivery: { id: string; webhookId: string; eventId: string; payload: object },
  ): Promise<DeliveryRow> {
    const [row] = await tx.$queryRaw<DeliveryRow[]>`
      INSERT INTO webhook_deliveries AS d (workspace_id, id, webhook_id, event_sequence, event_id, event_type, payload, next_attempt_at)
      VALUES (${workspaceId}, ${delivery.id}, ${delivery.webhookId}, 0, ${delivery.eventId}, 'webhook.test',
              ${JSON.stringify(delivery.payload)}::jsonb, now())
      RETURNING ${DELIVERY_COLUMNS}`;
    return row as DeliveryRow;
  },

  /** The webhook's deliveries, most recent first, after a position of a previous page. */
  listDeliveries(
    db: Reader,
    workspaceId: string,
    webhookId: string,
    query: { status?: string | undefined; limit: number; after?: Position | undefined },
  ): Promise<DeliveryRow[]> {
    const status = query.status ? Prisma.sql`AND d.status = ${query.status}` : Prisma.empty;
    const after = query.after
      ? Prisma.sql`AND (d.created_at, d.id) < (${query.after.createdAt}::timestamptz, ${query.after.id}::text)`
      : Prisma.empty;
    return db.$queryRaw<DeliveryRow[]>`
      SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries AS d
      WHERE d.workspace_id = ${workspaceId} AND d.webhook_id = ${webhookId} ${status} ${after}
      ORDER BY d.created_at DESC, d.id DESC LIMIT ${query.limit + 1}`;
  },

  async deliveryExists(tx: Tx, workspaceId: string, webhookId: string, id: string): Promise<boolean> {
    const rows = await tx.$queryRaw<unknown[]>`
      SELECT 1 FROM webhook_deliveries WHERE workspace_id = ${workspaceId} AND webhook_id = ${webhookId} AND id = ${id}`;
    return rows.length > 0;
  },

  /**
   * Queues a delivery for an attempt now (a failed one starts a new round of retries); undefined
   * when there is no such delivery.
   */
  async retry(tx: Tx, workspaceId: string, webhookId: string, id: string): Promise<DeliveryRow | undefined> {
    const [row] = await tx.$queryRaw<DeliveryRow[]>`
      UPDATE webhook_deliveries AS d SET status = 'pending', next_attempt_at = now(), leased_until = NULL,
        attempts = CASE WHEN d.status = 'failed' THEN 0 ELSE d.attempts END
      WHERE d.workspace_id = ${workspaceId} AND d.webhook_id = ${webhookId} AND d.id = ${id}
      RETURNING ${DELIVERY_COLUMNS}`;
    return row;
  },

  /**
   * Claims up to `limit` due deliveries of enabled webhooks, across workspaces, for one attempt:
   * each is leased to this process for `leaseMs` (another process skips it meanwhile; if this one
   * dies, the lease runs out and it is attempted again). Counts the attempt. Planned per run: a
   * plan made for no limit in particular expects a tenth of the due deliveries, and then read
   * every delivery into a hash to update the few it claimed.
   */
  claimDue(db: Reader, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
    return db.$queryRaw<ClaimedDelivery[]>`${PLANNED_PER_RUN}
      WITH due AS (
        SELECT d.workspace_id, d.id FROM webhook_deliveries AS d
        JOIN webhooks AS w ON w.workspace_id = d.workspace_id AND w.id = d.webhook_id AND w.enabled
        WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND (d.leased_until IS NULL OR d.leased_until < now())
        ORDER BY d.next_attempt_at
        LIMIT ${limit}
        FOR UPDATE OF d SKIP LOCKED
      ),
      claimed AS (
        UPDATE webhook_deliveries AS d
        SET leased_until = now() + make_interval(secs => ${leaseMs / 1000}), attempts = d.attempts + 1, last_attempt_at = now()
        FROM due WHERE d.workspace_id = due.workspace_id AND d.id = due.id
        RETURNING d.workspace_id, d.id, d.webhook_id, d.event_id, d.event_sequence, d.attempts, d.created_at, d.payload
      )
      SELECT c.workspace_id AS "workspaceId", c.id, c.webhook_id AS "webhookId", c.event_id AS "eventId",
             c.attempts, c.created_at AS "createdAt", w.url,
             array_remove(ARRAY[w.secret, CASE WHEN w.previous_secret_until > now() THEN w.previous_secret END], NULL) AS secrets,
             CASE WHEN c.payload IS NOT NULL THEN c.payload::text
                  WHEN e.id IS NOT NULL THEN json_build_object('id', e.id, 'type', e.type, 'sequence', e.sequence,
                    'createdAt', to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'data', e.data)::text
             END AS body
      FROM claimed AS c
      JOIN webhooks AS w ON w.workspace_id = c.workspace_id AND w.id = c.webhook_id
      LEFT JOIN events AS e ON e.workspace_id = c.workspace_id AND e.sequence = c.event_sequence`;
  },

  /**
   * Records attempts' outcomes in one statement: each delivery succeeded, is pending again at its
   * nextAttemptAt, or failed; and on each webhook, its failing streak (cleared by a success among
   * them) or its disabling (at once by 410, or by a failure after a day of failing).
   */
  async complete(db: Reader, outcomes: AttemptOutcome[], failingSinceBefore: Date): Promise<void> {
    if (outcomes.length === 0) return;
    const rows = outcomes.map((o) => ({
      workspace_id: o.workspaceId,
      id: o.id,
      webhook_id: o.webhookId,
      status: o.status,
      status_code: o.statusCode,
      error: o.error,
      next_attempt_at: o.nextAttemptAt?.toISOString() ?? null,
      gone: o.gone,
    }));
    await db.$executeRaw`
      WITH v AS MATERIALIZED (
        SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS v(workspace_id text, id text, webhook_id text,
          status text, status_code int, error text, next_attempt_at timestamptz, gone boolean)
      ),
      done AS (
        UPDATE webhook_deliveries AS d SET status = v.status, next_attempt_at = v.next_attempt_at, leased_until = NULL,
          last_status_code = v.status_code, last_error = v.error
        FROM v WHERE d.workspace_id = v.workspace_id AND d.id = v.id
      ),
      w AS (
        SELECT workspace_id, webhook_id, bool_or(status = 'succeeded') AS ok, bool_or(gone) AS gone
        FROM v GROUP BY workspace_id, webhook_id
      )
      UPDATE webhooks AS h SET
        failing_since = CASE WHEN w.ok THEN NULL ELSE coalesce(h.failing_since, now()) END,
        enabled = CASE WHEN w.gone OR (NOT w.ok AND h.failing_since < ${failingSinceBefore}) THEN false ELSE h.enabled END,
        disabled_reason = CASE WHEN w.gone THEN 'gone'
                               WHEN NOT w.ok AND h.failing_since < ${failingSinceBefore} THEN 'failing'
                               ELSE h.disabled_reason END
      FROM w WHERE h.workspace_id = w.workspace_id AND h.id = w.webhook_id`;
  },
};

export type WebhookRepo = typeof webhookRepo;

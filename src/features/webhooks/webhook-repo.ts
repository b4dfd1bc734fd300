import { Prisma } from "../../../generated/prisma/client.ts";
import type { Position } from "../../domain/cursor.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";

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

const WEBHOOK_COLUMNS = Prisma.raw(`id, url, types, audience_ids AS "audienceIds", description, enabled,
  disabled_reason AS "disabledReason", failing_since AS "failingSince", created_at AS "createdAt"`);

const DELIVERY_COLUMNS = Prisma.raw(`d.id, d.event_id AS "eventId", d.event_type AS "eventType",
  d.event_sequence::float8 AS sequence, d.status, d.attempts, d.last_attempt_at AS "lastAttemptAt",
  d.last_status_code AS "lastStatusCode", d.last_error AS "lastError", d.next_attempt_at AS "nextAttemptAt",
  d.created_at AS "createdAt"`);

export const webhookRepo = {
  async count(tx: SqlClient, workspaceId: string): Promise<number> {
    const [row] = await tx.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM webhooks WHERE workspace_id = ${workspaceId}`;
    return row?.n ?? 0;
  },

  async create(
    tx: SqlClient,
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

  list(db: SqlClient, workspaceId: string): Promise<WebhookRow[]> {
    return db.$queryRaw<WebhookRow[]>`
      SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE workspace_id = ${workspaceId} ORDER BY created_at, id`;
  },

  async find(db: SqlClient, workspaceId: string, id: string): Promise<WebhookRow | undefined> {
    const [row] = await db.$queryRaw<WebhookRow[]>`
      SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE workspace_id = ${workspaceId} AND id = ${id}`;
    return row;
  },

  /** Reads the webhook and locks it for a change. */
  async lock(tx: SqlClient, workspaceId: string, id: string): Promise<WebhookRow | undefined> {
    const [row] = await tx.$queryRaw<WebhookRow[]>`
      SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE workspace_id = ${workspaceId} AND id = ${id} FOR UPDATE`;
    return row;
  },

  /** Writes a changed webhook; enabling it clears why it was disabled and its failing streak. */
  async update(
    tx: SqlClient,
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

  async delete(tx: SqlClient, workspaceId: string, id: string): Promise<boolean> {
    return (await tx.$executeRaw`DELETE FROM webhooks WHERE workspace_id = ${workspaceId} AND id = ${id}`) > 0;
  },

  /** Replaces the secret; the previous one still signs until `previousUntil`. */
  async rotate(tx: SqlClient, workspaceId: string, id: string, secret: string, previousUntil: Date): Promise<void> {
    await tx.$executeRaw`
      UPDATE webhooks SET previous_secret = secret, previous_secret_until = ${previousUntil}, secret = ${secret}, updated_at = now()
      WHERE workspace_id = ${workspaceId} AND id = ${id}`;
  },

  /** Queues a delivery of an event that is not in the feed (a test), with its body. */
  async queueTest(
    tx: SqlClient,
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
    db: SqlClient,
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

  async deliveryExists(tx: SqlClient, workspaceId: string, webhookId: string, id: string): Promise<boolean> {
    const rows = await tx.$queryRaw<unknown[]>`
      SELECT 1 FROM webhook_deliveries WHERE workspace_id = ${workspaceId} AND webhook_id = ${webhookId} AND id = ${id}`;
    return rows.length > 0;
  },

  /**
   * Queues a delivery for an attempt now (a failed one starts a new round of retries); undefined
   * when there is no such delivery.
   */
  async retry(tx: SqlClient, workspaceId: string, webhookId: string, id: string): Promise<DeliveryRow | undefined> {
    const [row] = await tx.$queryRaw<DeliveryRow[]>`
      UPDATE webhook_deliveries AS d SET status = 'pending', next_attempt_at = now(), leased_until = NULL,
        attempts = CASE WHEN d.status = 'failed' THEN 0 ELSE d.attempts END
      WHERE d.workspace_id = ${workspaceId} AND d.webhook_id = ${webhookId} AND d.id = ${id}
      RETURNING ${DELIVERY_COLUMNS}`;
    return row;
  },

  /**
   * Queues the webhook's failed deliveries created at or after `since` for an attempt now, each
   * starting a new round of retries; how many.
   */
  recover(tx: SqlClient, workspaceId: string, webhookId: string, since: Date): Promise<number> {
    return tx.$executeRaw`
      UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now(), leased_until = NULL, attempts = 0
      WHERE workspace_id = ${workspaceId} AND webhook_id = ${webhookId} AND status = 'failed' AND created_at >= ${since}`;
  },

  /**
   * Every webhook's pending and failed deliveries (those still kept), for the metrics: counted
   * through the status index, not through every delivery kept.
   */
  backlog(db: SqlClient): Promise<{ webhookId: string; pending: number; failed: number }[]> {
    return db.$queryRaw`
      SELECT w.id AS "webhookId", coalesce(c.pending, 0)::int AS pending, coalesce(c.failed, 0)::int AS failed
      FROM webhooks AS w
      LEFT JOIN (
        SELECT workspace_id, webhook_id, count(*) FILTER (WHERE status = 'pending') AS pending,
               count(*) FILTER (WHERE status = 'failed') AS failed
        FROM webhook_deliveries WHERE status IN ('pending', 'failed') GROUP BY workspace_id, webhook_id
      ) AS c ON c.workspace_id = w.workspace_id AND c.webhook_id = w.id`;
  },
};

export type WebhookRepo = typeof webhookRepo;

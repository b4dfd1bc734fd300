import { PLANNED_PER_RUN } from "../../platform/db/prepared-statements.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";

// The deliverer's SQL: claiming due deliveries and recording what their attempts came to.

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
  /** Its place among this claim's deliveries of its webhook, from 1: they are sent in this order. */
  place: number;
  /** Attempted ahead of its schedule (a probe of a failing receiver): a failure does not count. */
  early: boolean;
  /** When it was due by its schedule. */
  scheduledAt: Date | null;
}

export const webhookAttemptRepo = {
  /**
   * Claims up to `limit` due deliveries of enabled webhooks, across workspaces, for one attempt
   * each: leased to this process (another process skips them meanwhile; if this one dies, the
   * lease runs out and they are attempted again). Planned per run: a plan made for no limit in
   * particular expects a tenth of the due deliveries, and then read every delivery into a hash.
   *
   * A webhook's receiver sees its events in sequence order: a webhook with a delivery in flight
   * gets none now, and at most `perWebhook` of one webhook are claimed, oldest first, to be sent
   * one after another (`place` 1, 2, …; the sender renews the leases of those still to go, see
   * `renew`).
   * A failing webhook whose probe is due (next_probe_at) also gets its oldest pending delivery,
   * ahead of its schedule (`early`: the attempt is not counted, see `complete`), unless that
   * is due within `probeMinMs` anyway. Meanwhile its newer deliveries' retries wait for that
   * probe when it is that close: were the receiver back, one of them would arrive before the
   * older ones. (First attempts do not wait: a receiver refusing one event must not hold back
   * the others.)
   */
  claimDue(
    db: SqlClient,
    {
      limit,
      perWebhook,
      leaseMs,
      probeMinMs,
    }: { limit: number; perWebhook: number; leaseMs: number; probeMinMs: number },
  ): Promise<ClaimedDelivery[]> {
    return db.$queryRaw<ClaimedDelivery[]>`${PLANNED_PER_RUN}
      WITH busy AS MATERIALIZED (
        SELECT DISTINCT workspace_id, webhook_id FROM webhook_deliveries
        WHERE leased_until IS NOT NULL AND leased_until >= now() AND status = 'pending'
      ),
      probing AS (
        UPDATE webhooks AS w SET next_probe_at = NULL
        WHERE w.next_probe_at <= now() AND w.enabled
          AND NOT EXISTS (SELECT 1 FROM busy AS b WHERE b.workspace_id = w.workspace_id AND b.webhook_id = w.id)
        RETURNING w.workspace_id, w.id
      ),
      probe AS (
        SELECT p.* FROM probing AS w CROSS JOIN LATERAL (
          SELECT d.workspace_id, d.id, d.webhook_id, d.next_attempt_at, d.event_sequence FROM webhook_deliveries AS d
          WHERE d.workspace_id = w.workspace_id AND d.webhook_id = w.id AND d.status = 'pending'
          ORDER BY d.event_sequence, d.created_at LIMIT 1
          FOR UPDATE SKIP LOCKED
        ) AS p
        WHERE p.next_attempt_at > now() + make_interval(secs => ${probeMinMs / 1000})
      ),
      scheduled AS (
        SELECT d.workspace_id, d.id, d.webhook_id, d.next_attempt_at, d.event_sequence FROM webhook_deliveries AS d
        JOIN webhooks AS w ON w.workspace_id = d.workspace_id AND w.id = d.webhook_id AND w.enabled
        WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND (d.leased_until IS NULL OR d.leased_until < now())
          AND NOT EXISTS (SELECT 1 FROM busy AS b WHERE b.workspace_id = d.workspace_id AND b.webhook_id = d.webhook_id)
          AND NOT (d.attempts > 0 AND w.next_probe_at <= now() + make_interval(secs => ${probeMinMs / 1000})
            AND EXISTS (SELECT 1 FROM webhook_deliveries AS o
              WHERE o.workspace_id = d.workspace_id AND o.webhook_id = d.webhook_id AND o.status = 'pending'
                AND o.event_sequence < d.event_sequence))
        ORDER BY d.next_attempt_at, d.event_sequence
        LIMIT ${limit}
        FOR UPDATE OF d SKIP LOCKED
      ),
      placed AS (
        SELECT u.workspace_id, u.id, u.next_attempt_at, u.event_sequence,
          row_number() OVER (PARTITION BY u.workspace_id, u.webhook_id ORDER BY u.next_attempt_at, u.event_sequence) AS place
        FROM (SELECT * FROM scheduled UNION SELECT * FROM probe) AS u
      ),
      due AS (
        SELECT * FROM placed WHERE place <= ${perWebhook} ORDER BY next_attempt_at, event_sequence LIMIT ${limit}
      ),
      claimed AS (
        UPDATE webhook_deliveries AS d
        SET leased_until = now() + make_interval(secs => ${leaseMs / 1000}),
          attempts = d.attempts + CASE WHEN d.next_attempt_at <= now() THEN 1 ELSE 0 END, last_attempt_at = now()
        FROM due WHERE d.workspace_id = due.workspace_id AND d.id = due.id
        RETURNING d.workspace_id, d.id, d.webhook_id, d.event_id, d.event_sequence, d.attempts, d.created_at, d.payload,
          d.next_attempt_at, due.place
      )
      SELECT c.workspace_id AS "workspaceId", c.id, c.webhook_id AS "webhookId", c.event_id AS "eventId",
             c.attempts, c.created_at AS "createdAt", w.url, c.place::int AS place,
             c.next_attempt_at > now() AS early, c.next_attempt_at AS "scheduledAt",
             array_remove(ARRAY[w.secret, CASE WHEN w.previous_secret_until > now() THEN w.previous_secret END], NULL) AS secrets,
             CASE WHEN c.payload IS NOT NULL THEN c.payload::text
                  WHEN e.id IS NOT NULL THEN json_build_object('id', e.id, 'type', e.type, 'sequence', e.sequence,
                    'createdAt', to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'data', e.data)::text
             END AS body
      FROM claimed AS c
      JOIN webhooks AS w ON w.workspace_id = c.workspace_id AND w.id = c.webhook_id
      LEFT JOIN events AS e ON e.workspace_id = c.workspace_id AND e.sequence = c.event_sequence
      ORDER BY c.workspace_id, c.webhook_id, c.place`;
  },

  /**
   * Records attempts' outcomes in one statement: each delivery succeeded, is pending again at its
   * nextAttemptAt, or failed; and on each webhook, its failing streak (cleared by a success among
   * them) or its disabling (at once by 410, or by a failure after a day of failing).
   *
   * Catching up: a success to a webhook that had been failing since before `rules.catchUpBefore`
   * makes its other pending deliveries due now (the receiver is back: its backlog goes out in
   * sequence order, not at each delivery's next retry, up to 5 min to 24 h away). A webhook
   * failing only since then is not caught up: a receiver that refuses one event but takes the
   * others keeps clearing its streak, and that event keeps its own schedule. While a webhook
   * fails, its next probe is due after a tenth of how long it has failed, between
   * `rules.probeMinMs` and `rules.probeMaxMs`.
   */
  async complete(
    db: SqlClient,
    outcomes: AttemptOutcome[],
    rules: { failingSinceBefore: Date; catchUpBefore: Date; probeMinMs: number; probeMaxMs: number },
  ): Promise<void> {
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
    const { failingSinceBefore, catchUpBefore } = rules;
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
      w AS MATERIALIZED (
        SELECT workspace_id, webhook_id, bool_or(status = 'succeeded') AS ok, bool_or(gone) AS gone
        FROM v GROUP BY workspace_id, webhook_id
      ),
      caught_up AS (
        UPDATE webhook_deliveries AS d SET next_attempt_at = now()
        FROM w JOIN webhooks AS h ON h.workspace_id = w.workspace_id AND h.id = w.webhook_id
        WHERE w.ok AND h.failing_since < ${catchUpBefore}
          AND d.workspace_id = w.workspace_id AND d.webhook_id = w.webhook_id AND d.status = 'pending'
          AND (d.leased_until IS NULL OR d.leased_until < now())
          AND NOT EXISTS (SELECT 1 FROM v WHERE v.workspace_id = d.workspace_id AND v.id = d.id)
      )
      UPDATE webhooks AS h SET
        failing_since = CASE WHEN w.ok THEN NULL ELSE coalesce(h.failing_since, now()) END,
        next_probe_at = CASE WHEN w.ok THEN NULL
          ELSE now() + make_interval(secs => least(${rules.probeMaxMs / 1000},
            greatest(${rules.probeMinMs / 1000}, extract(epoch FROM now() - coalesce(h.failing_since, now())) / 10))) END,
        enabled = CASE WHEN w.gone OR (NOT w.ok AND h.failing_since < ${failingSinceBefore}) THEN false ELSE h.enabled END,
        disabled_reason = CASE WHEN w.gone THEN 'gone'
                               WHEN NOT w.ok AND h.failing_since < ${failingSinceBefore} THEN 'failing'
                               ELSE h.disabled_reason END
      FROM w WHERE h.workspace_id = w.workspace_id AND h.id = w.webhook_id`;
  },

  /**
   * Extends the leases of claimed deliveries still to be attempted by `leaseMs` from now; those
   * whose lease ran out meanwhile are not renewed (another process may have claimed them) and are
   * left out of the answer.
   */
  async renew(
    db: SqlClient,
    deliveries: Pick<ClaimedDelivery, "workspaceId" | "id">[],
    leaseMs: number,
  ): Promise<string[]> {
    if (deliveries.length === 0) return [];
    const rows = deliveries.map((d) => ({ workspace_id: d.workspaceId, id: d.id }));
    const renewed = await db.$queryRaw<{ id: string }[]>`
      UPDATE webhook_deliveries AS d SET leased_until = now() + make_interval(secs => ${leaseMs / 1000})
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS v(workspace_id text, id text)
      WHERE d.workspace_id = v.workspace_id AND d.id = v.id AND d.status = 'pending' AND d.leased_until >= now()
      RETURNING d.id`;
    return renewed.map((r) => r.id);
  },

  /** Gives back claimed deliveries that were not attempted: due again at once, the attempt not counted. */
  async release(db: SqlClient, deliveries: Pick<ClaimedDelivery, "workspaceId" | "id" | "early">[]): Promise<void> {
    if (deliveries.length === 0) return;
    const rows = deliveries.map((d) => ({ workspace_id: d.workspaceId, id: d.id, counted: !d.early }));
    await db.$executeRaw`
      UPDATE webhook_deliveries AS d SET leased_until = NULL, attempts = d.attempts - CASE WHEN v.counted THEN 1 ELSE 0 END
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS v(workspace_id text, id text, counted boolean)
      WHERE d.workspace_id = v.workspace_id AND d.id = v.id`;
  },
};

export type WebhookAttemptRepo = typeof webhookAttemptRepo;

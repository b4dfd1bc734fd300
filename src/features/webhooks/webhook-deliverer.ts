import { Webhook } from "standardwebhooks";
import type { Store } from "../../platform/db/database.ts";
import { webhookAttempts, webhookDuration } from "../../platform/metrics.ts";
import type { AttemptOutcome, ClaimedDelivery, WebhookRepo } from "./webhook-repo.ts";
import { DISABLE_AFTER_FAILING_MS, outcomeOf, retryDelay } from "./webhook-rules.ts";
import type { WebhookSender } from "./webhook-transport.ts";

export interface DelivererDeps {
  store: Pick<Store, "db">;
  webhooks: Pick<WebhookRepo, "claimDue" | "complete">;
  sender: Pick<WebhookSender, "send">;
  /** Attempts in flight in this process at most: a receiver that hangs holds this many at most. */
  concurrency?: number;
  /**
   * How long a claimed delivery is this process's: past the receiver's time to answer, so that
   * no other process attempts it meanwhile; if this process dies, others attempt it after that.
   */
  leaseMs: number;
  /** When attempts are made (see ATTEMPT_OFFSETS_MS); tests use a faster one. */
  attemptOffsetsMs?: readonly number[];
  now?: () => number;
  onError: (error: unknown) => void;
}

/** Signs a body per Standard Webhooks, once with each secret (two during a rotation). */
export function signatures(secrets: string[], eventId: string, at: Date, body: string): string {
  return secrets.map((secret) => new Webhook(secret).sign(eventId, at, body)).join(" ");
}

/**
 * Delivers due webhook deliveries: claims them (leased, so processes share the work and a
 * delivery is never attempted by two at once), POSTs each signed, and records the outcome and the
 * next attempt. Attempts run concurrently up to `concurrency`, never on a request's path.
 */
export function createWebhookDeliverer(deps: DelivererDeps) {
  const { store, webhooks, sender } = deps;
  const concurrency = deps.concurrency ?? 32;
  const now = deps.now ?? Date.now;
  let inFlight = 0;
  let onSlotFree: () => void = () => {};
  const idle: (() => void)[] = [];

  // Outcomes are recorded in batches: one statement (and one commit) for every attempt that
  // ended while the previous batch was being written, not one per attempt. A batch is taken in a
  // later turn of the event loop (setImmediate), after the answers that arrived meanwhile have
  // been read: the embedded store runs its statements on this thread, and taken at once, each
  // batch held one outcome.
  let queued: { outcome: AttemptOutcome; done: (error?: unknown) => void }[] = [];
  let writing = false;
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
  async function writeQueued(): Promise<void> {
    while (queued.length > 0) {
      await nextTurn();
      const batch = queued;
      queued = [];
      try {
        await webhooks.complete(
          store.db,
          batch.map((q) => q.outcome),
          new Date(now() - DISABLE_AFTER_FAILING_MS),
        );
        for (const q of batch) q.done();
      } catch (error) {
        for (const q of batch) q.done(error);
      }
    }
    writing = false;
  }
  function record(outcome: AttemptOutcome): Promise<void> {
    return new Promise((resolve, reject) => {
      queued.push({ outcome, done: (error) => (error === undefined ? resolve() : reject(error)) });
      if (!writing) {
        writing = true;
        void writeQueued();
      }
    });
  }

  async function attempt(delivery: ClaimedDelivery): Promise<void> {
    const at = new Date(now());
    const timer = webhookDuration.startTimer();
    const result =
      delivery.body === null
        ? { error: "the event is no longer kept" }
        : await sender.send(delivery.url, delivery.body, {
            "user-agent": "audience-service",
            "webhook-id": delivery.eventId,
            "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
            "webhook-signature": signatures(delivery.secrets, delivery.eventId, at, delivery.body),
          });
    timer();
    const statusCode = "statusCode" in result ? result.statusCode : undefined;
    const outcome = outcomeOf(statusCode);
    const delay = outcome === "failed" ? retryDelay(delivery.attempts, deps.attemptOffsetsMs) : undefined;
    webhookAttempts.inc({ outcome: outcome === "succeeded" ? "succeeded" : delay !== undefined ? "retry" : "failed" });
    await record({
      workspaceId: delivery.workspaceId,
      id: delivery.id,
      webhookId: delivery.webhookId,
      status: outcome === "succeeded" ? "succeeded" : delay !== undefined ? "pending" : "failed",
      statusCode: statusCode ?? null,
      error: "error" in result ? result.error : null,
      nextAttemptAt: delay === undefined ? null : new Date(now() + delay),
      gone: outcome === "gone",
    });
  }

  // While attempts are in flight, a freed slot waits for others before claiming: one claim
  // statement per attempt was most of the embedded store's work under a stream of deliveries.
  const claimBatch = Math.max(1, Math.floor(concurrency / 4));

  return {
    /**
     * Claims and starts due deliveries while there is room; returns when nothing more is due.
     * With attempts in flight it claims only once a quarter of the slots are free, unless
     * `anyRoom` (the periodic run: a hanging receiver holding most slots cannot stop the others).
     */
    async deliverDue(anyRoom = false): Promise<void> {
      for (;;) {
        const room = concurrency - inFlight;
        if (room <= 0 || (room < claimBatch && inFlight > 0 && !anyRoom)) return;
        const claimed = await webhooks.claimDue(store.db, room, deps.leaseMs);
        for (const delivery of claimed) {
          inFlight++;
          attempt(delivery)
            .catch(deps.onError)
            .finally(() => {
              inFlight--;
              if (inFlight === 0) for (const resolve of idle.splice(0)) resolve();
              onSlotFree();
            });
        }
        if (claimed.length < room) return;
      }
    },
    /** Called whenever an attempt ends and a slot is free again. */
    onSlotFree(callback: () => void): void {
      onSlotFree = callback;
    },
    /** Resolves when no attempt is in flight (a stopping server waits for its attempts). */
    idle(): Promise<void> {
      return inFlight === 0 ? Promise.resolve() : new Promise((resolve) => idle.push(resolve));
    },
  };
}

export type WebhookDeliverer = ReturnType<typeof createWebhookDeliverer>;

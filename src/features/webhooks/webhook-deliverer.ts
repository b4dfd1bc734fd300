import { Webhook } from "standardwebhooks";
import type { Store } from "../../platform/db/database.ts";
import { webhookAttempts, webhookDuration } from "../../platform/metrics.ts";
import type { AttemptOutcome, ClaimedDelivery, WebhookAttemptRepo } from "./webhook-attempt-repo.ts";
import { ATTEMPT_OFFSETS_MS, DISABLE_AFTER_FAILING_MS, outcomeOf, retryDelay } from "./webhook-rules.ts";
import type { WebhookSender } from "./webhook-transport.ts";

export interface DelivererDeps {
  store: Pick<Store, "db">;
  webhooks: Pick<WebhookAttemptRepo, "claimDue" | "complete" | "release" | "renew">;
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
  const offsets = deps.attemptOffsetsMs ?? ATTEMPT_OFFSETS_MS;
  // The schedule's first retry step (5 s) is how soon a failing receiver is probed at first, and
  // how long a webhook must have been failing for a success to catch up its backlog; its second
  // (5 min) is how seldom a receiver down for long is probed at most.
  const firstStep = (offsets[1] ?? 5_000) - (offsets[0] ?? 0);
  const probeMaxMs = Math.max(firstStep, (offsets[2] ?? 0) - (offsets[1] ?? 0));
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
          {
            failingSinceBefore: new Date(now() - DISABLE_AFTER_FAILING_MS),
            catchUpBefore: new Date(now() - firstStep),
            probeMinMs: firstStep,
            probeMaxMs,
          },
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
    // A probe that fails leaves the delivery as it was: due at its scheduled time, its attempts
    // not used up by probing a receiver that is down.
    const probeFailed = outcome === "failed" && delivery.early;
    const delay = outcome === "failed" && !probeFailed ? retryDelay(delivery.attempts, offsets) : undefined;
    webhookAttempts.inc({
      outcome: outcome === "succeeded" ? "succeeded" : probeFailed || delay !== undefined ? "retry" : "failed",
    });
    await record({
      workspaceId: delivery.workspaceId,
      id: delivery.id,
      webhookId: delivery.webhookId,
      status: outcome === "succeeded" ? "succeeded" : probeFailed || delay !== undefined ? "pending" : "failed",
      statusCode: statusCode ?? null,
      error: "error" in result ? result.error : null,
      nextAttemptAt: probeFailed ? delivery.scheduledAt : delay === undefined ? null : new Date(now() + delay),
      gone: outcome === "gone",
    });
  }

  // While attempts are in flight, a freed slot waits for others before claiming: one claim
  // statement per attempt was most of the embedded store's work under a stream of deliveries.
  const claimBatch = Math.max(1, Math.floor(concurrency / 4));

  // At most this many of one webhook per claim: sent one after another, they hold their slots
  // longer than the same number sent at once, so one webhook's backlog leaves room for others.
  const perWebhook = claimBatch;

  let stopping = false;
  function ended(count: number): void {
    inFlight -= count;
    if (inFlight === 0) for (const resolve of idle.splice(0)) resolve();
    onSlotFree();
  }

  // A chain's deliveries are all leased for leaseMs when claimed; before one is attempted with
  // less than half of that left, the leases of those still to go are renewed in one statement
  // (those of a quick receiver never are). A process that dies blocks its webhooks for one lease.
  async function runChain(chain: ClaimedDelivery[], claimedAt: number): Promise<void> {
    let rest = chain;
    let leasedUntil = claimedAt + deps.leaseMs;
    while (rest.length > 0) {
      if (stopping) {
        // A stopping process does not wait for a whole chain: the rest is released, and another
        // process (or this one's next start) sends it.
        await webhooks.release(store.db, rest).catch(deps.onError);
        ended(rest.length);
        return;
      }
      if (leasedUntil - now() < deps.leaseMs / 2) {
        const at = now();
        const renewed = await webhooks.renew(store.db, rest, deps.leaseMs).catch((error) => {
          deps.onError(error);
          return [] as string[];
        });
        const kept = rest.filter((d) => renewed.includes(d.id));
        ended(rest.length - kept.length);
        rest = kept;
        leasedUntil = at + deps.leaseMs;
        continue;
      }
      const [delivery, ...others] = rest as [ClaimedDelivery, ...ClaimedDelivery[]];
      rest = others;
      try {
        await attempt(delivery);
      } catch (error) {
        deps.onError(error);
      } finally {
        ended(1);
      }
    }
  }

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
        const claimedAt = now();
        const claimed = await webhooks.claimDue(store.db, {
          limit: room,
          perWebhook,
          leaseMs: deps.leaseMs,
          probeMinMs: firstStep,
        });
        // A webhook's deliveries go one after another, in the order claimed (its sequence order);
        // different webhooks' at the same time. Each counts as in flight until its own attempt ends.
        const chains = new Map<string, ClaimedDelivery[]>();
        for (const delivery of claimed) {
          const key = `${delivery.workspaceId}/${delivery.webhookId}`;
          chains.set(key, [...(chains.get(key) ?? []), delivery]);
        }
        inFlight += claimed.length;
        for (const chain of chains.values()) void runChain(chain, claimedAt);
        if (claimed.length < room) return;
      }
    },
    /** Called whenever an attempt ends and a slot is free again. */
    onSlotFree(callback: () => void): void {
      onSlotFree = callback;
    },
    /** Starts no more attempts; resolves when none is in flight (a stopping server waits for them). */
    stop(): Promise<void> {
      stopping = true;
      return this.idle();
    },
    /** Resolves when no attempt is in flight. */
    idle(): Promise<void> {
      return inFlight === 0 ? Promise.resolve() : new Promise((resolve) => idle.push(resolve));
    },
  };
}

export type WebhookDeliverer = ReturnType<typeof createWebhookDeliverer>;

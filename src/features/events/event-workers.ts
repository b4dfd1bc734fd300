import { statisticsChecks, tablesAnalyzed } from "../../platform/metrics.ts";
import { createWorkLoop } from "../../platform/work-loop.ts";
import type { WebhookDeliverer } from "../webhooks/webhook-deliverer.ts";
import type { EventRelay } from "./event-relay.ts";

/** How often every workspace's outbox is swept, for entries no poke announced (another process crashed). */
const SWEEP_MS = 2_000;
/** How often due deliveries are looked for, besides being poked: retries fall due with time. */
const DELIVERY_POLL_MS = 1_000;
const PURGE_MS = 3_600_000;
/** How often the embedded store's tables are checked for changes that need new statistics. */
const STATISTICS_MS = 5_000;

export interface EventWorkerDeps {
  relay: Pick<EventRelay, "publish" | "publishAll">;
  deliverer: Pick<WebhookDeliverer, "deliverDue" | "onSlotFree" | "idle">;
  /** Removes events and deliveries older than the retention period. */
  purge: () => Promise<unknown>;
  /**
   * The embedded store only: ANALYZEs the tables that changed enough (PGlite has no autovacuum)
   * and names them.
   */
  refreshStatistics?: (() => Promise<string[]>) | undefined;
  onError: (error: unknown) => void;
}

/**
 * The background work of a server process. A write that recorded events pokes the relay when it
 * commits, so its events are published at once, and the relay pokes the deliverer when it queued
 * deliveries; periodic runs publish what no poke announced (entries of a process that died before
 * publishing them), attempt retries as they fall due and apply the retention period. Several
 * processes share the work through the database (see event-relay.ts, webhook-deliverer.ts). On
 * the embedded store, the tables' planner statistics are kept up to date as well.
 */
export function createEventWorkers({ relay, deliverer, purge, refreshStatistics, onError }: EventWorkerDeps) {
  const dirty = new Set<string>();
  const relayLoop = createWorkLoop({
    intervalMs: SWEEP_MS,
    onError,
    async run(reason) {
      if (reason === "interval") {
        dirty.clear();
        await relay.publishAll();
        return;
      }
      for (const workspaceId of dirty) {
        dirty.delete(workspaceId);
        await relay.publish(workspaceId);
      }
    },
  });
  const deliveryLoop = createWorkLoop({
    intervalMs: DELIVERY_POLL_MS,
    onError,
    run: (reason) => deliverer.deliverDue(reason === "interval"),
  });
  deliverer.onSlotFree(() => deliveryLoop.poke());
  const purgeLoop = createWorkLoop({ intervalMs: PURGE_MS, onError, run: async () => void (await purge()) });
  const statisticsLoop = refreshStatistics
    ? createWorkLoop({
        intervalMs: STATISTICS_MS,
        onError,
        async run() {
          for (const table of await refreshStatistics()) tablesAnalyzed.inc({ table });
          statisticsChecks.inc();
        },
      })
    : undefined;

  return {
    /** A write that recorded events in this workspace has committed. */
    committed(workspaceId: string): void {
      dirty.add(workspaceId);
      relayLoop.poke();
    },
    /** Deliveries were queued: attempt them now. */
    deliveriesQueued(): void {
      deliveryLoop.poke();
    },
    start(): void {
      relayLoop.start();
      deliveryLoop.start();
      purgeLoop.start();
      statisticsLoop?.start();
    },
    /** Stops the loops and waits for what they are doing, attempts in flight included. */
    async stop(): Promise<void> {
      await Promise.all([relayLoop.stop(), deliveryLoop.stop(), purgeLoop.stop(), statisticsLoop?.stop()]);
      await deliverer.idle();
    },
  };
}

export type EventWorkers = ReturnType<typeof createEventWorkers>;

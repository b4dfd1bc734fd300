import { createWorkLoop } from "../../platform/work-loop.ts";
import type { WebhookDeliverer } from "./webhook-deliverer.ts";

/** How often due deliveries are looked for, besides being poked: retries fall due with time. */
const DELIVERY_POLL_MS = 1_000;

/**
 * Webhook deliveries in the background of a server process: attempted as soon as the relay
 * queues them (deliveriesQueued) or a slot frees, and every second for retries falling due.
 * Several processes share the work through the database (see webhook-deliverer.ts).
 */
export function createWebhookWorkers({
  deliverer,
  onError,
}: {
  deliverer: Pick<WebhookDeliverer, "deliverDue" | "onSlotFree" | "stop">;
  onError: (error: unknown) => void;
}) {
  const deliveryLoop = createWorkLoop({
    intervalMs: DELIVERY_POLL_MS,
    onError,
    run: (reason) => deliverer.deliverDue(reason === "interval"),
  });
  deliverer.onSlotFree(() => deliveryLoop.poke());
  return {
    /** Deliveries were queued: attempt them now. */
    deliveriesQueued(): void {
      deliveryLoop.poke();
    },
    start(): void {
      deliveryLoop.start();
    },
    /** Stops the loop and waits for the attempts in flight. */
    async stop(): Promise<void> {
      await deliveryLoop.stop();
      await deliverer.stop();
    },
  };
}

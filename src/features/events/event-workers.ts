import { createWorkLoop } from "../../platform/work-loop.ts";
import type { EventRelay } from "./event-relay.ts";

/** How often every workspace's outbox is swept, for entries no poke announced (another process crashed). */
const SWEEP_MS = 2_000;
const PURGE_MS = 3_600_000;

export interface EventWorkerDeps {
  relay: Pick<EventRelay, "publish" | "publishAll">;
  /** Removes events and deliveries older than the retention period. */
  purge: () => Promise<unknown>;
  onError: (error: unknown) => void;
}

/**
 * The event feed's background work in a server process. A write that recorded events pokes the
 * relay when it commits, so its events are published at once; periodic runs publish what no poke
 * announced (entries of a process that died before publishing them) and apply the retention
 * period. Several processes share the work through the database (see event-relay.ts).
 */
export function createEventWorkers({ relay, purge, onError }: EventWorkerDeps) {
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
  const purgeLoop = createWorkLoop({ intervalMs: PURGE_MS, onError, run: async () => void (await purge()) });

  return {
    /** A write that recorded events in this workspace has committed. */
    committed(workspaceId: string): void {
      dirty.add(workspaceId);
      relayLoop.poke();
    },
    start(): void {
      relayLoop.start();
      purgeLoop.start();
    },
    /** Stops the loops and waits for what they are doing. */
    async stop(): Promise<void> {
      await Promise.all([relayLoop.stop(), purgeLoop.stop()]);
    },
  };
}

export type EventWorkers = ReturnType<typeof createEventWorkers>;

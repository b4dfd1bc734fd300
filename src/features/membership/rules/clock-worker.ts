import { createWorkLoop } from "../../../platform/work-loop.ts";

export interface ClockWorkerDeps {
  /** TIME_RULES_INTERVAL_SECONDS, in milliseconds. */
  intervalMs: number;
  /** The workspaces with an audience last brought up to date before this time. */
  dueForClock(before: Date): Promise<string[]>;
  /** Brings a workspace's relative-time rules up to date (membership-service.ts). */
  followClock(workspaceId: string): Promise<unknown>;
  onError(error: unknown): void;
  clock?: () => number;
}

/**
 * Relative-time rules follow the clock: every interval, each workspace with an audience that is
 * due catches up, in a write of its own. Several processes share the work through the database:
 * an audience brought up to date by one within the last half interval is not due for another,
 * and a tick covers only the time since the last one, so no work is done twice.
 */
export function createClockWorker({
  intervalMs,
  dueForClock,
  followClock,
  onError,
  clock = Date.now,
}: ClockWorkerDeps) {
  const loop = createWorkLoop({
    intervalMs,
    onError,
    async run() {
      for (const workspaceId of await dueForClock(new Date(clock() - intervalMs / 2))) {
        await followClock(workspaceId);
      }
    },
  });
  return { start: () => loop.start(), stop: () => loop.stop() };
}

import type { Store } from "../../platform/db/database.ts";
import { createWorkLoop } from "../../platform/work-loop.ts";
import { type ActivityPartitionRepo, type Month, monthOf } from "./activity-partitions-repo.ts";

const DAY_MS = 86_400_000;
/** Months are created this far ahead of the clock, so ingests find theirs long before they need it. */
const AHEAD_MS = 62 * DAY_MS;

export interface ActivityPurgeDeps {
  store: Pick<Store, "transaction">;
  partitions: ActivityPartitionRepo;
  /** ACTIVITY_RETENTION_DAYS. */
  retentionDays: number;
  intervalMs: number;
  onError(error: unknown): void;
  clock?: () => number;
}

/**
 * Keeps activities' partitions: the months from the retention's cutoff to two months ahead exist,
 * the months wholly older than the cutoff are dropped, and the older rows left (of the month the
 * cutoff falls in) are deleted. One process at a time does a run (the others skip it); a run
 * that finds nothing to do costs two statements.
 */
export function createActivityPurge({
  store,
  partitions,
  retentionDays,
  intervalMs,
  onError,
  clock = Date.now,
}: ActivityPurgeDeps) {
  async function run(): Promise<void> {
    const now = clock();
    const cutoff = new Date(now - retentionDays * DAY_MS);
    await store.transaction(async (tx) => {
      if (!(await partitions.claim(tx))) return;
      const existing = await partitions.months(tx);
      const names = new Set(existing.map((month) => month.name));
      for (const month of monthsBetween(cutoff, new Date(now + AHEAD_MS))) {
        if (!names.has(month.name)) await partitions.create(tx, month);
      }
      for (const month of existing) if (month.to.getTime() <= cutoff.getTime()) await partitions.drop(tx, month);
      await partitions.deleteBefore(tx, cutoff);
    });
  }
  const loop = createWorkLoop({ intervalMs, onError, run });
  return { start: () => loop.start(), stop: () => loop.stop(), run };
}

/** The months from the one holding `from` to the one holding `to`. */
function monthsBetween(from: Date, to: Date): Month[] {
  const months: Month[] = [];
  for (let month = monthOf(from); month.from.getTime() <= to.getTime(); month = monthOf(month.to)) months.push(month);
  return months;
}

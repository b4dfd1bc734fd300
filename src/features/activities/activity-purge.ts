import type { Store } from "../../platform/db/database.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";
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
  /**
   * Whether the months get partitions of their own (PostgreSQL). The embedded store keeps every
   * activity in the default partition and deletes the expired rows: its DDL costs seconds of its
   * one connection, and its workspaces are small enough for a delete.
   */
  partitioned: boolean;
  intervalMs: number;
  onError(error: unknown): void;
  clock?: () => number;
}

/**
 * Keeps activities' partitions: this month and the next two exist, and so does the month of any
 * row the default partition took (an activity that arrived before its month existed: a late
 * arrival, or one stored before the first run); the months wholly older than the retention's
 * cutoff are dropped, and the older rows left (of the month the cutoff falls in) are deleted.
 * Past months are created only when rows need them, so a new installation starts with three.
 * On the embedded store only the delete runs (see `partitioned`). One process at a time does a
 * run (the others skip it).
 */
export function createActivityPurge({
  store,
  partitions,
  retentionDays,
  partitioned,
  intervalMs,
  onError,
  clock = Date.now,
}: ActivityPurgeDeps) {
  async function run(): Promise<void> {
    const now = clock();
    const cutoff = new Date(now - retentionDays * DAY_MS);
    await store.transaction(async (tx) => {
      if (!(await partitions.claim(tx))) return;
      if (partitioned) await keepMonths(tx, now, cutoff);
      await partitions.deleteBefore(tx, cutoff);
    });
  }

  /** This month and the next two, the months rows in the default partition need; none too old. */
  async function keepMonths(tx: SqlClient, now: number, cutoff: Date): Promise<void> {
    const existing = await partitions.months(tx);
    const wanted = new Map<string, Month>();
    for (const month of monthsBetween(new Date(now), new Date(now + AHEAD_MS))) wanted.set(month.name, month);
    for (const month of await partitions.monthsInDefault(tx)) {
      if (month.to.getTime() > cutoff.getTime()) wanted.set(month.name, month);
    }
    const names = new Set(existing.map((month) => month.name));
    for (const month of wanted.values()) if (!names.has(month.name)) await partitions.create(tx, month);
    for (const month of existing) if (month.to.getTime() <= cutoff.getTime()) await partitions.drop(tx, month);
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

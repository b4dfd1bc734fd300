import { walCheckpoints } from "../metrics.ts";
import { createWorkLoop } from "../work-loop.ts";
import type { SqlClient } from "./sql-client.ts";

/** How often the embedded store looks at the WAL written since its last checkpoint. */
const CHECK_MS = 5_000;
/** A checkpoint is due once this much WAL was written since the last one: max_wal_size's 32 MB. */
export const CHECKPOINT_AFTER_BYTES = 32 * 1024 * 1024;

/**
 * The embedded store's checkpoints. PostgreSQL's checkpointer starts one when the WAL written since
 * the last reaches max_wal_size; PGlite runs PostgreSQL in single-user mode, with no checkpointer,
 * so without these the WAL would grow with every write until the process ends (and a checkpoint is
 * what lets PostgreSQL remove or recycle old segments). A CHECKPOINT is cheap here: it writes out
 * at most shared_buffers (16 MB) of dirty pages.
 */
export const walRepo = {
  /** Bytes of WAL written since the redo point of the last checkpoint. */
  async sinceCheckpoint(db: SqlClient): Promise<number> {
    const [row] = await db.$queryRaw<{ bytes: string }[]>`
      SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), (pg_control_checkpoint()).redo_lsn)::text AS bytes`;
    return Number(row?.bytes ?? 0);
  },
  async checkpoint(db: SqlClient): Promise<void> {
    await db.$executeRaw`CHECKPOINT`;
  },
};

/** Checks every few seconds and checkpoints when due; counted in audience_db_checkpoints_total. */
export function createCheckpointWorker(db: SqlClient) {
  return createWorkLoop({
    intervalMs: CHECK_MS,
    // The next interval tries again; the failures are counted, and the data directory's size shows.
    onError: () => walCheckpoints.inc({ outcome: "failed" }),
    async run() {
      if ((await walRepo.sinceCheckpoint(db)) < CHECKPOINT_AFTER_BYTES) return;
      await walRepo.checkpoint(db);
      walCheckpoints.inc({ outcome: "done" });
    },
  });
}

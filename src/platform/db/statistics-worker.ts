import { statisticsChecks, tablesAnalyzed } from "../metrics.ts";
import { createWorkLoop } from "../work-loop.ts";
import type { SqlClient } from "./sql-client.ts";
import { statisticsRepo } from "./statistics-repo.ts";

/** How often the embedded store's tables are checked for changes that need new statistics. */
const STATISTICS_MS = 5_000;

/**
 * The embedded store's planner statistics, kept up to date in the background (PGlite runs no
 * autovacuum; see statistics-repo.ts).
 */
export function createStatisticsWorker(db: SqlClient, onError: (error: unknown) => void) {
  return createWorkLoop({
    intervalMs: STATISTICS_MS,
    onError,
    async run() {
      for (const table of await statisticsRepo.analyzeChanged(db)) tablesAnalyzed.inc({ table });
      statisticsChecks.inc();
    },
  });
}

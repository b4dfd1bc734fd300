import { Debug } from "@prisma/client/runtime/client";
import { clearLogs } from "@prisma/debug";

// Prisma keeps the arguments of its last 100 debug calls in memory for crash reports, whether
// DEBUG is set or not: every query it sends, with its parameters, once in the client and once in
// the driver adapter (two copies of its debug module). After a 10,000-member import those are
// megabytes each, held until 100 later calls push them out: tens of megabytes of a server's
// memory, and member data kept longer than the request that carried it.
const FILLER = Debug("audience-service:forget");
const HISTORY_LENGTH = 100;

/**
 * Forgets what Prisma's debug history holds: the adapter's copy is cleared; the copy bundled in
 * the client exposes no clear, so 100 one-character entries push everything else out (~0.1 ms).
 */
export function forgetPrismaHistory(): void {
  clearLogs();
  for (let i = 0; i < HISTORY_LENGTH; i++) FILLER("-");
}

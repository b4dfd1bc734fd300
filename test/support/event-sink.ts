import type { OutboxEntry } from "../../src/features/membership/outbox-entries.ts";
import type { SqlClient } from "../../src/platform/db/sql-client.ts";

/**
 * What a test sees of a write's events: the entries it records, in its transaction (where the
 * service writes them to the outbox in the write's closing statement), and its commit.
 */
export interface EventSink {
  /** The write's entries, in its transaction: they exist exactly if it commits. */
  record(tx: SqlClient, workspaceId: string, entries: OutboxEntry[]): Promise<void>;
  /** Told after the write committed. */
  committed(workspaceId: string): void;
}

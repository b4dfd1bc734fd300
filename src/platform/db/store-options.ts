import type { RecyclingOptions } from "./pglite-recycling.ts";

/** How a store is opened (database.ts openStore): where, and its limits. */
export interface StoreOptions {
  /** PostgreSQL connection string (directly, or through PgBouncer); absent → the embedded store in dataDir. */
  databaseUrl?: string | undefined;
  /** A direct connection for LISTEN, when databaseUrl goes through PgBouncer in transaction mode. */
  listenUrl?: string | undefined;
  /** Directory of the embedded store; absent with no databaseUrl → an in-memory store. */
  dataDir?: string | undefined;
  /**
   * An in-memory embedded store starts as a copy of this database (PGlite's dumpDataDir of a
   * migrated one, as test/support/embedded-template.ts makes) instead of creating one: creating
   * takes seconds, loading a fraction of that, and the test suite opens a store per file.
   */
  template?: Blob | undefined;
  /** Connections for write transactions (PostgreSQL); as many run at once. */
  poolSize?: number;
  /** Connections for reads and single statements (PostgreSQL), so that writes cannot starve reads. */
  readPoolSize?: number;
  /** Connections for the reads of exports (PostgreSQL), so that exports cannot starve the rest. */
  exportPoolSize?: number;
  /**
   * Prepare statements on PostgreSQL's connections (default true); after the first sign of a
   * pooler that does not keep them (PgBouncer in transaction mode), they stop by themselves.
   */
  preparedStatements?: boolean;
  /** Told once, when prepared statements stopped because the connections do not keep them. */
  onPreparedStatementsLost?: (error: unknown) => void;
  /** Longest a statement of a write transaction may run (PostgreSQL). */
  statementTimeoutMs?: number;
  /** Longest a read may wait for its answer (PostgreSQL). */
  readTimeoutMs?: number;
  /** Longest a request waits for a connection, or for its turn to write. */
  connectTimeoutMs?: number;
  /** Write transactions that may wait for their turn; one more is refused at once. */
  queueLimit?: number;
  /** PostgreSQL streaming replicas that answer reads outside write transactions (replica-reads.ts). */
  readUrls?: string[] | undefined;
  /** A read with a Consistency-Token waits this long for a replica to replay it, then reads the primary. */
  replicaWaitMs?: number;
  /** Without a token, a replica further behind the primary than this is not read from. */
  replicaMaxLagMs?: number;
  /** How often the replicas' positions are probed (its default: src/config/configuration.ts). */
  replicaProbeIntervalMs?: number;
  /**
   * When the embedded store on disk replaces its PGlite instance to give its memory back
   * (pglite-recycling.ts; defaults in embedded-settings.ts), and what it is told of it.
   */
  recycling?: Partial<Omit<RecyclingOptions, "reopen">> | undefined;
  /** The embedded store's data directory lock was lost (another process took it over). */
  onLockLost?: (error: Error) => void;
}

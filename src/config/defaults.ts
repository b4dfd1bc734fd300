/** The store's limits when nothing else is configured; the README's configuration table lists them. */
export const STORE_DEFAULTS = {
  /** DATABASE_POOL_SIZE: connections for write transactions. */
  poolSize: 10,
  /** DATABASE_READ_POOL_SIZE: connections for reads and single statements. */
  readPoolSize: 5,
  /**
   * DATABASE_EXPORT_POOL_SIZE: connections for the reads of exports (member files), apart from
   * the others, so that exports can never take the connections pages, writes and background work
   * need; their statements take turns on them.
   */
  exportPoolSize: 2,
  /** DATABASE_STATEMENT_TIMEOUT_MS: longest statement of a write transaction. */
  statementTimeoutMs: 30_000,
  /** DATABASE_READ_TIMEOUT_MS: longest wait for a read's answer. */
  readTimeoutMs: 5_000,
  /** DATABASE_CONNECT_TIMEOUT_MS: longest wait for a connection or a turn to write. */
  connectTimeoutMs: 5_000,
  /** DATABASE_QUEUE_LIMIT: write transactions that may wait for their turn. */
  queueLimit: 50,
} as const;

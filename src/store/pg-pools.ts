import pg from "pg";
import { StoreTimeoutError } from "./pg-errors.ts";

export interface PoolOptions {
  connectionString: string;
  max: number;
  /** Longest wait for a connection: a free one from the pool, or a new one to the server. */
  connectTimeoutMs: number;
  /** Longest wait for any statement's answer (undefined: no limit, for migrations). */
  queryTimeoutMs?: number | undefined;
}

type QueryFn = (...args: unknown[]) => unknown;

/**
 * A client whose statements cannot hang. A frozen server (a network partition, a stopped
 * process) answers nothing, so the server's own statement_timeout cannot help: past timeoutMs
 * without an answer the connection is closed (the server rolls back whatever was open on it),
 * the statement fails with StoreTimeoutError, and the pool drops the client instead of handing a
 * half-answered connection, perhaps still inside a transaction, to the next caller.
 */
function clientWithTimeout(timeoutMs: number): typeof pg.Client {
  return class TimedClient extends pg.Client {
    constructor(config?: pg.ClientConfig) {
      super(config);
      // A connection closed under a statement is reported to that statement; never crash for it.
      this.on("error", () => {});
    }

    override query(...args: unknown[]): never {
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        (this as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
      }, timeoutMs);
      const translate = (error: unknown) =>
        timedOut ? new StoreTimeoutError(`The database did not answer within ${timeoutMs} ms.`) : error;
      const query = pg.Client.prototype.query as QueryFn;
      const last = args.length - 1;
      const callback = args[last];
      if (typeof callback === "function") {
        // The pool's own query(): node-style callback.
        args[last] = (error: unknown, result: unknown) => {
          clearTimeout(timer);
          callback(error ? translate(error) : error, result);
        };
        return query.apply(this, args) as never;
      }
      const result = query.apply(this, args) as Promise<unknown> | undefined;
      if (typeof result?.then !== "function") {
        clearTimeout(timer); // a submittable (cursor, stream): not ours to time
        return result as never;
      }
      return result.then(
        (value) => {
          clearTimeout(timer);
          return value;
        },
        (error: unknown) => {
          clearTimeout(timer);
          throw translate(error);
        },
      ) as never;
    }
  };
}

/**
 * A pg pool with bounded waits: for a connection (connectTimeoutMs, which node-postgres applies
 * both to waiting for a free client and to a new connection's handshake) and, when
 * queryTimeoutMs is set, for each statement. No startup parameters are sent, so the pool works
 * through PgBouncer in transaction mode as it does directly.
 */
export function createPool({ connectionString, max, connectTimeoutMs, queryTimeoutMs }: PoolOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    connectionTimeoutMillis: connectTimeoutMs,
    keepAlive: true,
    ...(queryTimeoutMs === undefined ? {} : { Client: clientWithTimeout(queryTimeoutMs) }),
  });
  // An idle client's connection error must not crash the process; the next query reports it.
  pool.on("error", () => {});
  return pool;
}

export const poolStats = (pool: pg.Pool) => ({
  inUse: pool.totalCount - pool.idleCount,
  idle: pool.idleCount,
  waiting: pool.waitingCount,
});

import net from "node:net";
import pg from "pg";
import { StoreTimeoutError } from "./pg-errors.ts";

/**
 * How long a timed-out statement's cancel request may take to be delivered before its connection
 * is closed anyway: a server that takes no cancel within a second is not answering at all.
 */
const CANCEL_WAIT_MS = 1_000;

export interface PoolOptions {
  connectionString: string;
  max: number;
  /** Longest wait for a connection: a free one from the pool, or a new one to the server. */
  connectTimeoutMs: number;
  /** Longest wait for any statement's answer (undefined: no limit, for migrations). */
  queryTimeoutMs?: number | undefined;
  /**
   * Statements sent with every BEGIN on the pool's connections, in the same message: a
   * transaction's own settings (SET LOCAL) at no round trip of their own. Needs queryTimeoutMs
   * (the timed client sends them).
   */
  beginWith?: string | undefined;
}

type QueryFn = (...args: unknown[]) => unknown;

/**
 * A client whose statements cannot hang. A frozen server (a network partition, a stopped
 * process) answers nothing, so the server's own statement_timeout cannot help: past timeoutMs
 * without an answer the statement is cancelled and its connection closed (the server rolls back
 * whatever was open on it), the statement fails with StoreTimeoutError, and the pool drops the
 * client instead of handing a half-answered connection, perhaps still inside a transaction, to
 * the next caller. With beginWith, its BEGIN carries those statements too (withBegin).
 */
function clientWithTimeout(timeoutMs: number, beginWith: string | undefined): typeof pg.Client {
  const begin = beginWith === undefined ? undefined : `BEGIN; ${beginWith}`;
  return class TimedClient extends pg.Client {
    constructor(config?: pg.ClientConfig) {
      super(config);
      // A connection closed under a statement is reported to that statement; never crash for it.
      this.on("error", () => {});
    }

    override query(...args: unknown[]): never {
      if (begin !== undefined) args[0] = withBegin(args[0], begin);
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        cancelThenClose(this);
      }, timeoutMs);
      const translate = (error: unknown) =>
        timedOut ? new StoreTimeoutError(`The database did not answer within ${timeoutMs} ms.`) : error;
      // An answer that arrives while the cancel is on its way still fails: the statement is past
      // its limit, and its client must leave the pool (released with an error) rather than serve
      // the next caller on a connection about to be closed, or have that caller's statement cancelled.
      const query = pg.Client.prototype.query as QueryFn;
      const last = args.length - 1;
      const callback = args[last];
      if (typeof callback === "function") {
        // The pool's own query(): node-style callback.
        args[last] = (error: unknown, result: unknown) => {
          clearTimeout(timer);
          callback(error || timedOut ? translate(error) : error, result);
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
          if (timedOut) throw translate(undefined);
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
 * Cancels the client's running statement, then closes its connection. Closing alone leaves the
 * statement running: PostgreSQL notices a closed connection only when it next writes to it, which
 * a long scan or sort does at its end. The cancel request (on a connection of its own, as libpq's
 * PQcancel) stops it at once; a pooler in transaction mode (PgBouncer) forwards it to the server
 * connection this client is linked to, which it is only until this client's connection closes, so
 * the close waits for the cancel to be delivered: the server (or the pooler, once it has
 * forwarded it) closes the cancel's connection when done. A replica's client cancels on the
 * replica it is connected to.
 */
function cancelThenClose(client: pg.Client): void {
  const { processID, secretKey, host, port } = client as unknown as {
    processID: number | null;
    secretKey: number | null;
    host: string;
    port: number;
  };
  const close = () =>
    (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
  if (processID === null || secretKey === null) {
    close(); // not yet started: nothing runs
    return;
  }
  const cancel = host.startsWith("/") ? net.connect(`${host}/.s.PGSQL.${port}`) : net.connect(port, host);
  const bound = setTimeout(() => cancel.destroy(), CANCEL_WAIT_MS);
  cancel.on("connect", () => {
    // CancelRequest: length 16, code 80877102 (1234 5678), the backend's process id and key.
    const message = Buffer.alloc(16);
    message.writeInt32BE(16, 0);
    message.writeInt32BE(80877102, 4);
    message.writeInt32BE(processID, 8);
    message.writeInt32BE(secretKey, 12);
    cancel.write(message);
  });
  cancel.on("error", () => {}); // a refused cancel changes nothing: the close below still happens
  cancel.on("close", () => {
    clearTimeout(bound);
    close();
  });
}

/**
 * BEGIN (as Prisma's pg adapter starts a transaction: a simple query, as text or { text }) sent as `begin`,
 * which starts with it: the statements of one simple query run in order, and their answer, like
 * BEGIN's, has no rows and no count for the caller to read.
 */
function withBegin(query: unknown, begin: string): unknown {
  if (query === "BEGIN") return begin;
  const config = query as { text?: unknown; values?: unknown[] } | null;
  if (config?.text === "BEGIN" && (config.values?.length ?? 0) === 0) return { ...config, text: begin };
  return query;
}

/**
 * A pg pool with bounded waits: for a connection (connectTimeoutMs, which node-postgres applies
 * both to waiting for a free client and to a new connection's handshake) and, when
 * queryTimeoutMs is set, for each statement. No startup parameters are sent, so the pool works
 * through PgBouncer in transaction mode as it does directly.
 */
export function createPool({
  connectionString,
  max,
  connectTimeoutMs,
  queryTimeoutMs,
  beginWith,
}: PoolOptions): pg.Pool {
  if (beginWith !== undefined && queryTimeoutMs === undefined) throw new Error("beginWith needs queryTimeoutMs");
  const pool = new pg.Pool({
    connectionString,
    max,
    connectionTimeoutMillis: connectTimeoutMs,
    keepAlive: true,
    ...(queryTimeoutMs === undefined ? {} : { Client: clientWithTimeout(queryTimeoutMs, beginWith) }),
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

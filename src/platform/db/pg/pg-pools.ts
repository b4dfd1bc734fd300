import net from "node:net";
import pg from "pg";
import { StoreTimeoutError } from "../pg-errors.ts";
import {
  type Around,
  answer,
  aroundOf,
  type Callback,
  committingQuery,
  Pipelined,
  sentWithCommit,
  statementsOf,
  textOf,
} from "./pg-pipeline.ts";

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
  const opening = beginWith === undefined ? undefined : ["BEGIN", ...statementsOf(beginWith)];
  return class TimedClient extends pg.Client {
    /** A BEGIN answered but not yet sent: it goes with the transaction's first statement. */
    beginPending = false;
    /** A statement answered but not yet sent: it goes with the COMMIT (sentWithCommit). */
    held: unknown[] | undefined;
    /** The transaction committed with its last statement (committingQuery): its COMMIT sends nothing. */
    committed = false;

    constructor(config?: pg.ClientConfig) {
      super(config);
      // A connection closed under a statement is reported to that statement; never crash for it.
      this.on("error", () => {});
    }

    override query(...args: unknown[]): never {
      if (opening === undefined) return this.send(args) as never;
      const text = textOf(args[0]);
      if (this.committed) return this.afterCommitted(text, args) as never;
      if (committingQuery(args[0])) return this.committing(args) as never;
      if (text === "BEGIN") {
        // Answered at once, sent with the transaction's first statement: a round trip less.
        this.beginPending = true;
        return answer(args, { command: "BEGIN", rowCount: null, rows: [], fields: [] }) as never;
      }
      if (this.beginPending) {
        this.beginPending = false;
        // A transaction that ends before any statement sent nothing, and sends nothing.
        if (text === "COMMIT" || text === "ROLLBACK") {
          return answer(args, { command: text, rowCount: null, rows: [], fields: [] }) as never;
        }
        return this.pipelined(args, { before: opening, after: [] }) as never;
      }
      if (sentWithCommit(args[0])) {
        // Answered at once (its answer is not read), sent with the COMMIT that follows.
        this.held = args;
        return answer(args, { command: "UPDATE", rowCount: 0, rows: [], fields: [] }) as never;
      }
      const held = this.held;
      if (held === undefined) return this.send(args) as never;
      this.held = undefined;
      if (text === "COMMIT") return this.commitWith(held, args) as never;
      // A ROLLBACK drops it; any other statement follows it in one pipeline.
      if (text === "ROLLBACK") return this.send(args) as never;
      return this.pipelined(args, { before: [aroundOf(held)], after: [] }) as never;
    }

    /**
     * A statement that commits its transaction: sent at once, with the BEGIN before it when that is
     * still to go and the COMMIT after it, in one pipeline; its answer is the statement's. When it
     * fails, nothing was committed: the transaction is rolled back before the error is told.
     */
    private async committing(args: unknown[]): Promise<unknown> {
      const held = this.held;
      const before = [...(this.beginPending ? (opening ?? []) : []), ...(held === undefined ? [] : [aroundOf(held)])];
      this.beginPending = false;
      this.held = undefined;
      try {
        const result = await this.pipelined(args, { before, after: ["COMMIT"] });
        this.committed = true;
        return result;
      } catch (error) {
        await this.send(["ROLLBACK"]).catch(() => {});
        throw error;
      }
    }

    /** After a committing statement: its transaction's end sends nothing; any other statement fails. */
    private afterCommitted(text: string | undefined, args: unknown[]): Promise<unknown> {
      this.committed = false;
      if (text === "COMMIT" || text === "ROLLBACK") {
        return answer(args, { command: text, rowCount: null, rows: [], fields: [] });
      }
      const error = new Error("a statement was sent after its transaction committed with its last statement");
      const callback = args[args.length - 1];
      if (typeof callback !== "function") return Promise.reject(error);
      queueMicrotask(() => (callback as Callback)(error, undefined));
      return Promise.resolve(undefined);
    }

    /**
     * The held statement and the COMMIT in one pipeline. When it fails, the COMMIT did not run
     * and the transaction is still open, failed: it is rolled back before the error is told, so
     * that the connection goes back to the pool with no transaction.
     */
    private async commitWith(held: unknown[], commit: unknown[]): Promise<unknown> {
      try {
        await this.pipelined(held, { before: [], after: ["COMMIT"] });
      } catch (error) {
        await this.send(["ROLLBACK"]).catch(() => {});
        throw error;
      }
      return answer(commit, { command: "COMMIT", rowCount: null, rows: [], fields: [] });
    }

    /** Sends one statement in a pipeline with others (pg-pipeline.ts), under the statement timeout. */
    private pipelined(args: unknown[], around: { before: Around[]; after: Around[] }): Promise<unknown> {
      const config = (typeof args[0] === "string" ? { text: args[0] } : args[0]) as pg.QueryConfig;
      const values = Array.isArray(args[1]) ? args[1] : config.values;
      const last = args[args.length - 1];
      const callback = typeof last === "function" ? (last as Callback) : undefined;
      const query = new Pipelined({ ...config, values }, around);
      const done = new Promise<unknown>((resolve, reject) => {
        query.callback = (error: Error | null, result: unknown) => (error ? reject(error) : resolve(result));
      });
      const sent = this.timed(() => (pg.Client.prototype.query as QueryFn).call(this, query), done);
      if (callback) {
        sent.then(
          (result) => callback(null, result),
          (error: Error) => callback(error, undefined),
        );
      }
      return sent;
    }

    /** One query() of pg, under the statement timeout; a submittable (cursor, stream) is not timed. */
    private send(args: unknown[]): Promise<unknown> {
      const query = pg.Client.prototype.query as QueryFn;
      const last = args.length - 1;
      const callback = args[last];
      if (typeof callback === "function") {
        // The pool's own query(): node-style callback.
        let finish: Callback = () => {};
        const done = new Promise<unknown>((resolve, reject) => {
          finish = (error, result) => (error ? reject(error) : resolve(result));
        });
        const sent = this.timed(() => query.apply(this, [...args.slice(0, last), finish]), done);
        sent.then(
          (result) => callback(null, result),
          (error: unknown) => callback(error, undefined),
        );
        return sent;
      }
      const result = query.apply(this, args) as Promise<unknown> | undefined;
      if (typeof result?.then !== "function") return result as never;
      return this.timed(() => {}, result);
    }

    /**
     * Runs `start`, whose answer `done` resolves, under the statement timeout. An answer that
     * arrives while the cancel is on its way still fails: the statement is past its limit, and
     * its client must leave the pool (released with an error) rather than serve the next caller on
     * a connection about to be closed, or have that caller's statement cancelled.
     */
    private timed(start: () => unknown, done: Promise<unknown>): Promise<unknown> {
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        cancelThenClose(this);
      }, timeoutMs);
      const timeout = () => new StoreTimeoutError(`The database did not answer within ${timeoutMs} ms.`);
      start();
      return done.then(
        (value) => {
          clearTimeout(timer);
          if (timedOut) throw timeout();
          return value;
        },
        (error: unknown) => {
          clearTimeout(timer);
          throw timedOut ? timeout() : error;
        },
      );
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
  // A client back in the pool has no transaction: a BEGIN never sent is forgotten (the adapter
  // always ends a transaction with COMMIT or ROLLBACK, which forgets it too; this is for safety).
  pool.on("release", (_error: unknown, client: pg.PoolClient) => {
    Object.assign(client, { beginPending: false, held: undefined, committed: false });
  });
  return pool;
}

export const poolStats = (pool: pg.Pool) => ({
  inUse: pool.totalCount - pool.idleCount,
  idle: pool.idleCount,
  waiting: pool.waitingCount,
});

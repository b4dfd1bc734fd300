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
  const opening = beginWith === undefined ? undefined : ["BEGIN", ...statementsOf(beginWith)];
  return class TimedClient extends pg.Client {
    /** A BEGIN answered but not yet sent: it goes with the transaction's first statement. */
    beginPending = false;

    constructor(config?: pg.ClientConfig) {
      super(config);
      // A connection closed under a statement is reported to that statement; never crash for it.
      this.on("error", () => {});
    }

    override query(...args: unknown[]): never {
      if (opening !== undefined) {
        const deferred = this.deferBegin(args, opening);
        if (deferred !== undefined) return deferred as never;
      }
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

    /**
     * BEGIN is answered at once and sent with the transaction's first statement, in one pipeline
     * (AfterBegin): a round trip less for every transaction. A transaction that ends before any
     * statement sends nothing. Returns the answer when it answered the call itself; otherwise the
     * call goes on, its first argument the pipelined query when a BEGIN is pending.
     */
    private deferBegin(args: unknown[], statements: string[]): Promise<unknown> | undefined {
      const text = textOf(args[0]);
      if (text === "BEGIN") {
        this.beginPending = true;
        return answer(args, { command: "BEGIN", rowCount: null, rows: [], fields: [] });
      }
      if (!this.beginPending) return undefined;
      this.beginPending = false;
      if (text === "COMMIT" || text === "ROLLBACK")
        return answer(args, { command: text, rowCount: null, rows: [], fields: [] });
      const config = (typeof args[0] === "string" ? { text: args[0] } : args[0]) as pg.QueryConfig;
      const values = Array.isArray(args[1]) ? args[1] : config.values;
      const callback = typeof args[args.length - 1] === "function" ? (args[args.length - 1] as Callback) : undefined;
      const query = new AfterBegin({ ...config, values }, statements);
      const done = new Promise<unknown>((resolve, reject) => {
        query.callback = (error: Error | null, result: unknown) => (error ? reject(error) : resolve(result));
      });
      args.length = 0;
      args.push(query);
      // The pipelined query goes through query() with its timer, as any statement does.
      const sent = this.timed(args, done);
      if (callback)
        sent.then(
          (result) => callback(null, result),
          (error: Error) => callback(error, undefined),
        );
      return sent;
    }

    /** Sends a submittable whose answer `done` resolves, under the statement timeout. */
    private timed(args: unknown[], done: Promise<unknown>): Promise<unknown> {
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        cancelThenClose(this);
      }, timeoutMs);
      const timeout = () => new StoreTimeoutError(`The database did not answer within ${timeoutMs} ms.`);
      (pg.Client.prototype.query as QueryFn).apply(this, args);
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

type Callback = (error: Error | null, result: unknown) => void;

/** A query's text, as pg takes it (text, or a config with text), when it has no parameters. */
function textOf(query: unknown): string | undefined {
  if (typeof query === "string") return query;
  const config = query as { text?: unknown; values?: unknown[] } | null;
  if (typeof config?.text === "string" && (config.values?.length ?? 0) === 0) return config.text;
  return undefined;
}

/** Answers a call of query() without sending anything, by its callback or its promise. */
function answer(args: unknown[], result: unknown): Promise<unknown> {
  const callback = args[args.length - 1];
  if (typeof callback === "function") queueMicrotask(() => (callback as Callback)(null, result));
  return Promise.resolve(result);
}

/** The statements of a `;`-separated list (the settings: no `;` inside a statement). */
const statementsOf = (list: string) =>
  list
    .split(";")
    .map((statement) => statement.trim())
    .filter((statement) => statement.length > 0);

type Connection = {
  parse(message: { text: string; name: string; types: unknown[] }): void;
  bind(message: object): void;
  execute(message: object): void;
};

/**
 * A transaction's first statement with its BEGIN and settings in front, in one pipeline of the
 * extended protocol (each a Parse, Bind and Execute, then the statement's own, then one Sync):
 * one round trip. The server runs them in order; an error in any skips the rest, and is the
 * query's error. The answer is the statement's: the others' results are dropped. Until their
 * answers are in, the query goes without its name, so that pg records a named statement as parsed
 * only by the statement's own ParseComplete.
 */
class AfterBegin extends (pg.Query as unknown as new (config: pg.QueryConfig) => PgQuery) {
  private pending: number;
  private named: string | undefined;

  constructor(
    config: pg.QueryConfig,
    private readonly opening: string[],
  ) {
    super(config);
    this.pending = opening.length;
  }

  override requiresPreparation(): boolean {
    return true;
  }

  override prepare(connection: Connection): void {
    for (const text of this.opening) {
      connection.parse({ text, name: "", types: [] });
      connection.bind({});
      connection.execute({});
    }
    super.prepare(connection);
    this.named = this.name;
    this.name = undefined;
  }

  override handleCommandComplete(message: unknown, connection: Connection): void {
    super.handleCommandComplete(message, connection);
    if (this.pending > 0 && --this.pending === 0) this.name = this.named;
  }

  override handleReadyForQuery(connection: Connection): void {
    if (Array.isArray(this._results)) this._results = this._results[this._results.length - 1];
    super.handleReadyForQuery(connection);
  }
}

/** What AfterBegin uses of pg's Query (its typings leave the protocol steps out). */
interface PgQuery {
  name: string | undefined;
  callback: Callback | undefined;
  _results: unknown;
  requiresPreparation(): boolean;
  prepare(connection: Connection): void;
  handleCommandComplete(message: unknown, connection: Connection): void;
  handleReadyForQuery(connection: Connection): void;
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
    (client as { beginPending?: boolean }).beginPending = false;
  });
  return pool;
}

export const poolStats = (pool: pg.Pool) => ({
  inUse: pool.totalCount - pool.idleCount,
  idle: pool.idleCount,
  waiting: pool.waitingCount,
});

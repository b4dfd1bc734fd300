import { createRequire } from "node:module";
import pg from "pg";
import { COMMITTING, SENT_WITH_COMMIT } from "../sql-client.ts";

/**
 * Round trips saved on PostgreSQL by pipelining (pg-pools.ts sends through these): a transaction's
 * BEGIN and settings go with its first statement, and its last statement, when nobody reads its
 * answer, with its COMMIT. node-postgres sends one query and waits for its answer before the next;
 * the extended protocol lets several statements go before one Sync, run by the server in order.
 */

export type Callback = (error: Error | null, result: unknown) => void;

const startsWith = (query: unknown, mark: string): boolean => {
  const text = typeof query === "string" ? query : (query as { text?: unknown } | null)?.text;
  return typeof text === "string" && text.startsWith(mark);
};

/** Whether a query (as pg takes it) is one to send with the COMMIT, unanswered until then. */
export const sentWithCommit = (query: unknown): boolean => startsWith(query, SENT_WITH_COMMIT);

/** Whether a query (as pg takes it) commits its transaction: sent at once, with the COMMIT after it. */
export const committingQuery = (query: unknown): boolean => startsWith(query, COMMITTING);

/** A query's text, as pg takes it (text, or a config with text), when it has no parameters. */
export function textOf(query: unknown): string | undefined {
  if (typeof query === "string") return query;
  const config = query as { text?: unknown; values?: unknown[] } | null;
  if (typeof config?.text === "string" && (config.values?.length ?? 0) === 0) return config.text;
  return undefined;
}

/** Answers a call of pg's query() without sending anything, by its callback or its promise. */
export function answer(args: unknown[], result: unknown): Promise<unknown> {
  const callback = args[args.length - 1];
  if (typeof callback === "function") queueMicrotask(() => (callback as Callback)(null, result));
  return Promise.resolve(result);
}

/** The statements of a `;`-separated list (settings: no `;` inside a statement). */
export const statementsOf = (list: string) =>
  list
    .split(";")
    .map((statement) => statement.trim())
    .filter((statement) => statement.length > 0);

type Connection = {
  parse(message: { text: string; name: string; types: unknown[] }): void;
  bind(message: object): void;
  describe(message: { type: "P"; name: string }): void;
  execute(message: object): void;
  sync(): void;
};

/** A statement sent before or after a Pipelined query's own: parameterless text, or text and values. */
export type Around = string | { text: string; values: unknown[] };

/** pg's own conversion of a value for the wire (what its Query binds values with). */
const { prepareValue } = createRequire(import.meta.url)("pg/lib/utils.js") as {
  prepareValue: (value: unknown) => unknown;
};

/** A query as pg takes it (text, or a config, with values beside it or in it) as a statement to send around another. */
export function aroundOf(args: unknown[]): Around {
  const config = (typeof args[0] === "string" ? { text: args[0] } : args[0]) as { text: string; values?: unknown[] };
  const values = Array.isArray(args[1]) ? args[1] : (config.values ?? []);
  return values.length === 0 ? config.text : { text: config.text, values };
}

/** What Pipelined uses of pg's Query (its typings leave the protocol's steps out). */
interface PgQuery {
  name: string | undefined;
  portal: string;
  callback: Callback | undefined;
  _results: unknown;
  requiresPreparation(): boolean;
  prepare(connection: Connection): void;
  _getRows(connection: Connection, rows: number | undefined): void;
  handleCommandComplete(message: unknown, connection: Connection): void;
  handleReadyForQuery(connection: Connection): void;
}

const Query = pg.Query as unknown as new (config: pg.QueryConfig) => PgQuery;

/**
 * One statement with statements before it (BEGIN and the settings, a statement whose answer is
 * not read) and after it (COMMIT), in one pipeline of the extended protocol: each a Parse, Bind and
 * Execute, the statement's own in between, then one Sync: one round trip. The server runs them in
 * order; an error in any skips the rest and is the query's error. The answer is the statement's:
 * the others' are dropped (each is one result of pg's). Until the ones before have answered, the
 * query goes without its name, so that pg records a named statement as parsed only on the
 * statement's own ParseComplete.
 */
export class Pipelined extends Query {
  private before: number;
  private named: string | undefined;

  constructor(
    config: pg.QueryConfig,
    private readonly around: { before: Around[]; after: Around[] },
  ) {
    super(config);
    this.before = around.before.length;
  }

  override requiresPreparation(): boolean {
    return true;
  }

  override prepare(connection: Connection): void {
    for (const text of this.around.before) send(connection, text);
    super.prepare(connection);
    if (this.before > 0) {
      this.named = this.name;
      this.name = undefined;
    }
  }

  /** The statement's Execute (as pg sends it, whole), then the ones after, then the Sync. */
  override _getRows(connection: Connection, rows: number | undefined): void {
    connection.execute({ portal: this.portal, rows });
    for (const text of this.around.after) send(connection, text);
    connection.sync();
  }

  override handleCommandComplete(message: unknown, connection: Connection): void {
    super.handleCommandComplete(message, connection);
    if (this.before > 0 && --this.before === 0) this.name = this.named;
  }

  override handleReadyForQuery(connection: Connection): void {
    if (Array.isArray(this._results)) this._results = this._results[this.around.before.length];
    super.handleReadyForQuery(connection);
  }
}

function send(connection: Connection, statement: Around): void {
  if (typeof statement === "string") {
    connection.parse({ text: statement, name: "", types: [] });
    connection.bind({});
    connection.execute({});
    return;
  }
  // Described, so that rows it may answer are read (and dropped) as pg reads any.
  connection.parse({ text: statement.text, name: "", types: [] });
  connection.bind({ statement: "", values: statement.values, valueMapper: prepareValue });
  connection.describe({ type: "P", name: "" });
  connection.execute({});
}

import pg from "pg";
import type { Store } from "../../src/platform/db/database.ts";
import type { SqlClient } from "../../src/platform/db/sql-client.ts";
import { type LiveServer, startLiveServer } from "./live-server.ts";

/**
 * What a stretch of work asked of the database, and in how many round trips.
 *
 * `sent` is listed where the composition meets the store: every statement of `db`, `primaryDb`
 * and `exportDb` and of each transaction, and each transaction's BEGIN and COMMIT (or ROLLBACK),
 * as `inTransaction` asks for them (src/platform/db/sql-client.ts). On the embedded store each is
 * one call into PGlite, so `count` is their number. On PostgreSQL `count` is what node-postgres
 * sent: its `query` calls, each answered before the next is sent, one round trip each; a
 * transaction's BEGIN and settings ride with its first statement (src/platform/db/pg/pg-pipeline.ts), so
 * they are listed in `sent` but are no round trip of their own. A transaction retried counts
 * again: the retry is sent again.
 */
export interface RoundTrips {
  /** BEGINs, statements and COMMITs in order: "BEGIN", the statement's first words, "COMMIT". */
  sent: string[];
  /** How many round trips. */
  count: number;
}

export interface CountingStore {
  /** The store to build the application with; everything sent through it is counted. */
  store: Store;
  /**
   * On PostgreSQL, the database the store serves: node-postgres's queries are counted only there
   * (other test files' servers may share this process, each with a database of its own).
   */
  database: string | undefined;
  /** Runs fn and returns what it sent through the store (nothing else may use it meanwhile). */
  count(fn: () => Promise<unknown>): Promise<RoundTrips>;
}

/** The first words of a statement, enough to tell which it was in a failing test's message. */
const headOf = (query: unknown): string => {
  const text =
    typeof query === "string" ? query : ((query as { strings?: string[]; text?: string }).text ?? String(query));
  return text.replace(/\s+/g, " ").trim().slice(0, 60);
};

/**
 * The API key's lookup is left out: the key is trusted for 5 s once verified (auth-service.ts), so
 * whether a request looks it up depends on the clock, not on the request.
 */
const KEY_LOOKUP = /\bapi_keys\b/;

/**
 * What the store sends on its own (audience-notifications.ts: LISTEN, and a pg_notify probe every
 * 10 s through the pool), not through the store's clients: left out of the count too.
 */
const BACKGROUND = /\b(pg_notify|LISTEN)\b/;

const textOf = (query: unknown): string =>
  typeof query === "string" ? query : String((query as { text?: unknown } | null)?.text ?? "");

function counted(client: SqlClient, sent: () => string[], skipped: () => void): SqlClient {
  const note =
    <A extends unknown[], R>(run: (...args: A) => Promise<R>) =>
    (...args: A) => {
      const [query] = args;
      const strings = (query as TemplateStringsArray).raw ? (query as TemplateStringsArray).join("?") : query;
      const text = typeof strings === "string" ? strings : ((strings as { text?: string }).text ?? "");
      if (KEY_LOOKUP.test(text)) skipped();
      else sent().push(headOf(strings));
      return run(...args);
    };
  return {
    $queryRaw: note(client.$queryRaw.bind(client)) as SqlClient["$queryRaw"],
    $queryRawUnsafe: note(client.$queryRawUnsafe.bind(client)) as SqlClient["$queryRawUnsafe"],
    $executeRaw: note(client.$executeRaw.bind(client)),
    $executeRawUnsafe: note(client.$executeRawUnsafe.bind(client)),
  };
}

export function countingStore(store: Store): CountingStore {
  let current: string[] = [];
  let keyLookups = 0;
  const sent = () => current;
  const skipped = () => {
    keyLookups++;
  };
  const wrapped: Store = {
    kind: store.kind,
    replicated: store.replicated,
    db: counted(store.db, sent, skipped),
    primaryDb: counted(store.primaryDb, sent, skipped),
    exportDb: counted(store.exportDb, sent, skipped),
    async transaction(fn) {
      return store.transaction(async (tx) => {
        current.push("BEGIN");
        try {
          const result = await fn(counted(tx, sent, skipped));
          current.push("COMMIT");
          return result;
        } catch (error) {
          current.push("ROLLBACK");
          throw error;
        }
      });
    },
    consistencyToken: () => store.consistencyToken(),
    watchAudiences: (listener) => store.watchAudiences(listener),
    ready: () => store.ready(),
    close: () => store.close(),
  };
  const counting: CountingStore = {
    store: wrapped,
    database: undefined,
    async count(fn) {
      current = [];
      keyLookups = 0;
      let queries = 0;
      const query = pg.Client.prototype.query;
      if (store.kind === "postgres") {
        pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
          if (this.database === counting.database && !BACKGROUND.test(textOf(args[0]))) queries++;
          return (query as (...a: unknown[]) => unknown).apply(this, args);
        } as typeof query;
      }
      try {
        await fn();
      } finally {
        pg.Client.prototype.query = query;
      }
      const result = current;
      current = [];
      return { sent: result, count: store.kind === "postgres" ? queries - keyLookups : result.length };
    },
  };
  return counting;
}

/**
 * A live server whose store counts what it sends, with background work off (workers: false) and
 * the rate limit off (its flush writes through the store), so that only the request is counted.
 */
export async function startCountingServer(): Promise<{ server: LiveServer; counting: CountingStore }> {
  let counting: CountingStore | undefined;
  const server = await startLiveServer({
    workers: false,
    settings: { rateLimit: { perMinute: 0 } },
    wrapStore: (store) => {
      counting = countingStore(store);
      return counting.store;
    },
  });
  if (!counting) throw new Error("the live server did not build its store through wrapStore");
  counting.database = server.databaseUrl && new URL(server.databaseUrl).pathname.slice(1);
  return { server, counting };
}

import { join } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import type { SqlDriverAdapter, SqlQuery, SqlQueryable } from "@prisma/driver-adapter-utils";
import { CONFIGURATION } from "../../config/configuration.ts";
import { defaultsOf } from "../../config/variable.ts";
import { trackDataDir, trackPool, transactionRetries } from "../metrics.ts";
import { createGate, type Gate, takingTurns } from "./admission.ts";
import { type AudienceChangeListener, listenForAudienceChanges } from "./audience-notifications.ts";
import { dataDirError, lockDataDir } from "./data-dir.ts";
import { applyMigrations, pgliteRunner, pgRunner } from "./migrate.ts";
import { createPool, poolStats } from "./pg/pg-pools.ts";
import { isRetryable, StoreTimeoutError } from "./pg-errors.ts";
import { openPglite } from "./pglite.ts";
import { storeClient } from "./pglite-recycling.ts";
import { type PreparedStatements, preparedStatements } from "./prepared-statements.ts";
import { tokenOf } from "./read-scope.ts";
import { openReplicas, primaryPosition } from "./replica-reads.ts";
import { inTransaction, type SqlClient, sqlClient } from "./sql-client.ts";
import type { StoreOptions } from "./store-options.ts";
import { createCheckpointWorker, walRepo } from "./wal-checkpoints.ts";

export type { StoreOptions } from "./store-options.ts";

export interface Store {
  readonly kind: "postgres" | "embedded";
  /**
   * Reads and single statements. With replicas, the reads of a read request (read-scope.ts) may
   * be answered by one; everything else, by the primary.
   */
  readonly db: SqlClient;
  /** Reads that only the primary answers, whatever the request: what a replica may not have yet. */
  readonly primaryDb: SqlClient;
  /** Whether reads may go to replicas (DATABASE_READ_URLS). */
  readonly replicated: boolean;
  /**
   * The reads of exports: on PostgreSQL, connections of their own (exportPoolSize), on the
   * embedded store one statement at a time, so that pages and writes run between them. A
   * statement waits for its turn without a deadline (an admitted export must not fail for
   * waiting): the statements ahead of it are few (exports are limited) and each has the read timeout.
   */
  readonly exportDb: SqlClient;
  /**
   * Runs fn in one transaction, retrying it when PostgreSQL reports a serialization failure or
   * deadlock, or when prepared statements turned out not to be kept (see prepared-statements.ts).
   * Transactions wait their turn in a bounded queue (StoreBusyError beyond it).
   */
  transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T>;
  /**
   * With replicas: the primary's position now, as the Consistency-Token of a write just
   * answered (at or after its commit); undefined without replicas.
   */
  consistencyToken(): Promise<string | undefined>;
  /**
   * Reports audiences renamed or deleted by other processes sharing the database; returns a
   * function that stops. The embedded store has no other processes: it is live at once.
   */
  watchAudiences(listener: AudienceChangeListener): () => Promise<void>;
  /** Resolves when the database answers and the migrations are applied. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

/** The readiness probe answers within this time, also when the database does not answer at all. */
const READY_TIMEOUT_MS = 900;
const MAX_ATTEMPTS = 5;

/** Opens the store and brings its schema up to date before anything else touches it. */
export async function openStore(options: StoreOptions): Promise<Store> {
  // No dataDir default here: a store opened without one (tests) lives in memory.
  const { dataDir: _, ...limits } = defaultsOf(CONFIGURATION.database);
  const settings: Settings = { ...limits, ...definedOnly(options) };
  if (settings.readUrls?.length && !options.databaseUrl)
    throw new Error("Replicas need PostgreSQL: the embedded store has none.");
  return options.databaseUrl ? openPostgres(options.databaseUrl, settings) : openEmbedded(settings);
}

type Limits =
  | "poolSize"
  | "readPoolSize"
  | "exportPoolSize"
  | "statementTimeoutMs"
  | "readTimeoutMs"
  | "connectTimeoutMs"
  | "queueLimit"
  | "replicaWaitMs"
  | "replicaMaxLagMs";
type Settings = StoreOptions & Required<Pick<StoreOptions, Limits | "preparedStatements">>;

async function openPostgres(databaseUrl: string, settings: Settings): Promise<Store> {
  const { connectTimeoutMs, statementTimeoutMs } = settings;
  // Migrations may rewrite large tables: their own connection, with no statement timeout.
  const migrations = createPool({ connectionString: databaseUrl, max: 1, connectTimeoutMs });
  try {
    await applyMigrations(pgRunner(migrations));
  } finally {
    await migrations.end();
  }
  // Writes and reads have pools of their own, so a burst of writes cannot starve the reads.
  // The writers' client-side limit backs up the server's statement_timeout, for a server that
  // does not answer at all. That timeout is set in each transaction, with its BEGIN, not per
  // connection: PgBouncer in transaction mode would carry a session setting over to other
  // clients, and refuses startup parameters. JIT compilation costs bulk writes more than it
  // saves.
  const writes = createPool({
    connectionString: databaseUrl,
    max: settings.poolSize,
    connectTimeoutMs,
    queryTimeoutMs: statementTimeoutMs + 1_000,
    beginWith: `SET LOCAL statement_timeout = ${Math.trunc(statementTimeoutMs)}; SET LOCAL jit = off`,
  });
  const reads = createPool({
    connectionString: databaseUrl,
    max: settings.readPoolSize,
    connectTimeoutMs,
    queryTimeoutMs: settings.readTimeoutMs,
  });
  const exportReads = createPool({
    connectionString: databaseUrl,
    max: settings.exportPoolSize,
    connectTimeoutMs,
    queryTimeoutMs: settings.readTimeoutMs,
  });
  // One connection each before any request: node-postgres keeps the first query a new connection
  // served referenced for that connection's life (a listener of its handshake), and that must
  // not be a request's bulk parameters.
  await Promise.all([reads.query("SELECT 1"), writes.query("SELECT 1"), exportReads.query("SELECT 1")]);
  // Export statements wait here, never in the pool (whose wait has the connect timeout).
  const exportTurns = createGate({ concurrency: settings.exportPoolSize, queueLimit: Number.POSITIVE_INFINITY });
  const gate = createGate({
    concurrency: settings.poolSize,
    queueLimit: settings.queueLimit,
    maxWaitMs: connectTimeoutMs,
  });
  const untrack = [
    trackPool("read", () => poolStats(reads)),
    // Writers wait in the gate, not in the pool: that is where the queue shows.
    trackPool("write", () => ({ ...poolStats(writes), waiting: gate.waiting })),
    trackPool("export", () => ({ ...poolStats(exportReads), waiting: exportTurns.waiting })),
  ];
  const prepared = preparedStatements(settings.preparedStatements !== false, settings.onPreparedStatementsLost);
  // pg sends a statement unnamed when its name is undefined; the adapter's type says string.
  const naming = { statementNameGenerator: prepared.nameOf as (query: SqlQuery) => string };
  const [db, writer, exporter] = await Promise.all([
    new PrismaPg(reads, naming).connect(),
    new PrismaPg(writes, naming).connect(),
    new PrismaPg(exportReads, naming).connect(),
  ]);
  const listenUrl = settings.listenUrl ?? databaseUrl;
  const primary = prepared.retrying(db);
  const notifier = sqlClient(primary);
  const replicas = await openReplicas({ ...settings, naming, retrying: prepared.retrying }, () =>
    primaryPosition(notifier),
  );
  const primaryExports = prepared.retrying(exporter);
  return createStore({
    kind: "postgres",
    db,
    reads: replicas?.route(primary, "reads") ?? primary,
    position: replicas
      ? async () => {
          const position = await primaryPosition(notifier);
          replicas.expect(position);
          return tokenOf(position);
        }
      : undefined,
    writer,
    exportDb: sqlClient(takingTurns(exportTurns, replicas?.route(primaryExports, "exports") ?? primaryExports)),
    prepared,
    gate,
    watchAudiences: (listener) =>
      listenForAudienceChanges(listenUrl, listener, {
        notify: async (payload) => {
          await notifier.$executeRaw`SELECT pg_notify('audience_changed', ${payload})`;
        },
      }),
    async closeDriver() {
      for (const stop of untrack) stop();
      await replicas?.close();
      await Promise.all([writer.dispose(), exporter.dispose(), reads.end(), writes.end(), exportReads.end()]);
    },
  });
}

async function openEmbedded(settings: Settings): Promise<Store> {
  const { dataDir } = settings;
  let unlock = async () => {};
  let dataPath: string | undefined;
  if (dataDir) {
    unlock = await lockDataDir(dataDir, settings.onLockLost ?? failHard);
    dataPath = join(dataDir, "pglite");
  }
  // Loaded only for the embedded store: a server on PostgreSQL never needs it.
  const { PrismaPGlite } = await import("pglite-prisma-adapter");
  let lite: PGlite;
  try {
    lite = await openPglite(dataPath, dataPath === undefined ? settings.template : undefined);
    await applyMigrations(pgliteRunner(lite));
  } catch (error) {
    await unlock();
    // PGlite reports a full or read-only disk as a bare errno object, or as a failed start.
    throw dataDir ? dataDirError(dataDir, error) : error;
  }
  // One process owns the data directory, so every change is its own.
  const watchAlone: Store["watchAudiences"] = (listener) => {
    listener.live(true);
    return async () => listener.live(false);
  };
  const client = storeClient(lite, dataDir && dataPath ? { dataDir, dataPath } : undefined, settings.recycling);
  // The adapter uses only what PgliteClient names of the instance.
  const db = await new PrismaPGlite(client as PGlite).connect();
  // PGlite runs one statement at a time: one transaction runs, the others wait their turn.
  const gate = createGate({ concurrency: 1, queueLimit: settings.queueLimit, maxWaitMs: settings.connectTimeoutMs });
  // The store checkpoints by itself (wal-checkpoints.ts), whether or not this process runs the
  // background work: the WAL stays bounded under any writer. The first checkpoint, at once, lets
  // go of segments a previous run left behind.
  const walClient = sqlClient(db);
  await walRepo.checkpoint(walClient);
  const checkpoints = createCheckpointWorker(walClient);
  checkpoints.start();
  const untrack = dataDir ? trackDataDir(dataDir) : () => {};
  return createStore({
    kind: "embedded",
    db,
    reads: db,
    position: undefined,
    writer: db,
    exportDb: sqlClient(takingTurns(createGate({ concurrency: 1, queueLimit: Number.POSITIVE_INFINITY }), db)),
    prepared: preparedStatements(false),
    gate,
    watchAudiences: watchAlone,
    async closeDriver() {
      untrack();
      await checkpoints.stop();
      // A stopped store's directory holds little WAL: smaller to copy, quicker to open.
      await walRepo.checkpoint(walClient).catch(() => {});
      await client.close();
      await unlock();
    },
  });
}

const failHard = (error: Error) => {
  throw error;
};

interface StoreParts {
  kind: Store["kind"];
  db: SqlDriverAdapter;
  /** db's reads as the store's clients run them: with replicas, routed (replica-reads.ts). */
  reads: SqlQueryable;
  /** The primary's position as a Consistency-Token; absent without replicas. */
  position: (() => Promise<string>) | undefined;
  writer: SqlDriverAdapter;
  exportDb: SqlClient;
  prepared: Pick<PreparedStatements, "lostOn" | "retrying">;
  gate: Gate;
  watchAudiences: Store["watchAudiences"];
  closeDriver: () => Promise<void>;
}

function createStore(parts: StoreParts): Store {
  const { kind, db, reads, position, writer, exportDb, prepared, gate, watchAudiences, closeDriver } = parts;
  // A transaction may run long (a rule over millions of members): each of its statements has the
  // statement timeout, and waiting for its connection has the pool's connect timeout.
  const client = sqlClient(prepared.retrying(db));
  return {
    kind,
    db: reads === db ? client : sqlClient(reads),
    primaryDb: client,
    replicated: position !== undefined,
    exportDb,
    watchAudiences,
    consistencyToken: async () => (position ? position() : undefined),
    transaction(fn) {
      return gate.run(async () => {
        for (let attempt = 1; ; attempt++) {
          try {
            return await inTransaction(writer, fn);
          } catch (error) {
            // A statement prepared on another connection (a pooler): again, with none named.
            const again = isRetryable(error) || prepared.lostOn(error);
            if (attempt >= MAX_ATTEMPTS || !again) throw error;
            transactionRetries.inc();
            await new Promise((resolve) => setTimeout(resolve, 5 * 2 ** attempt * Math.random()));
          }
        }
      });
    },
    async ready() {
      const check = client.$queryRaw`SELECT 1 FROM _prisma_migrations LIMIT 1`;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new StoreTimeoutError("The database did not answer in time.")),
          READY_TIMEOUT_MS,
        );
      });
      try {
        await Promise.race([check, late]);
      } finally {
        clearTimeout(timer);
        // The check ends on its own, by the read timeout at the latest; nobody waits for it.
        check.catch(() => {});
      }
    },
    async close() {
      await db.dispose();
      await closeDriver();
    },
  };
}

function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as Partial<T>;
}

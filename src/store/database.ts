import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { type Prisma, PrismaClient } from "../../generated/prisma/client.ts";
import { type AudienceChangeListener, listenForAudienceChanges } from "./audience-notifications.ts";
import { applyMigrations, pgliteRunner, pgRunner } from "./migrate.ts";
import { isRetryable } from "./pg-errors.ts";

export type Tx = Prisma.TransactionClient;

export interface StoreOptions {
  /** PostgreSQL connection string; absent → the embedded store in dataDir. */
  databaseUrl?: string | undefined;
  /** Directory of the embedded store; absent with no databaseUrl → an in-memory store. */
  dataDir?: string | undefined;
  /** Connections in the PostgreSQL pool. */
  poolSize?: number;
}

export interface Store {
  readonly kind: "postgres" | "embedded";
  readonly db: PrismaClient;
  /** Runs fn in one transaction, retrying it when PostgreSQL reports a serialization failure or deadlock. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Reports audiences renamed or deleted by other processes sharing the database; returns a
   * function that stops. The embedded store has no other processes: it is live at once.
   */
  watchAudiences(listener: AudienceChangeListener): () => Promise<void>;
  /** Resolves when the database answers and the migrations are applied. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

const TRANSACTION_OPTIONS = { maxWait: 30_000, timeout: 300_000 } as const;
const MAX_ATTEMPTS = 5;

/** Opens the store and brings its schema up to date before anything else touches it. */
export async function openStore(options: StoreOptions): Promise<Store> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      // The service's statements are short index work or one scan: compiling them with LLVM costs
      // more than it saves (100–300 ms for a bulk write whose row estimates pass jit_above_cost).
      options: "-c jit=off",
    });
    // An idle client's connection error must not crash the process; the next query reports it.
    pool.on("error", () => {});
    try {
      await applyMigrations(pgRunner(pool));
    } catch (error) {
      await pool.end();
      throw error;
    }
    const databaseUrl = options.databaseUrl;
    return createStore(
      "postgres",
      new PrismaClient({ adapter: new PrismaPg(pool) }),
      async () => {
        await pool.end();
      },
      (listener) => listenForAudienceChanges(databaseUrl, listener),
    );
  }
  let dataPath: string | undefined;
  if (options.dataDir) {
    dataPath = join(options.dataDir, "pglite");
    await mkdir(dataPath, { recursive: true });
  }
  // Loaded only for the embedded store: a server on PostgreSQL never needs them.
  const [{ PGlite }, { PrismaPGlite }] = await Promise.all([
    import("@electric-sql/pglite"),
    import("pglite-prisma-adapter"),
  ]);
  const lite = await PGlite.create(dataPath);
  try {
    await applyMigrations(pgliteRunner(lite));
  } catch (error) {
    await lite.close();
    throw error;
  }
  // One process owns the data directory, so every change is its own.
  const watchAlone: Store["watchAudiences"] = (listener) => {
    listener.live(true);
    return async () => listener.live(false);
  };
  return createStore("embedded", new PrismaClient({ adapter: new PrismaPGlite(lite) }), () => lite.close(), watchAlone);
}

function createStore(
  kind: Store["kind"],
  db: PrismaClient,
  closeDriver: () => Promise<void>,
  watchAudiences: Store["watchAudiences"],
): Store {
  return {
    kind,
    db,
    watchAudiences,
    async transaction(fn) {
      for (let attempt = 1; ; attempt++) {
        try {
          return await db.$transaction(fn, TRANSACTION_OPTIONS);
        } catch (error) {
          if (attempt >= MAX_ATTEMPTS || !isRetryable(error)) throw error;
          await new Promise((resolve) => setTimeout(resolve, 5 * 2 ** attempt * Math.random()));
        }
      }
    },
    async ready() {
      await db.$queryRaw`SELECT 1 FROM _prisma_migrations LIMIT 1`;
    },
    async close() {
      await db.$disconnect();
      await closeDriver();
    },
  };
}

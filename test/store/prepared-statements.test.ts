// On PostgreSQL a statement with parameters is prepared once per connection (its name is its
// text's hash), except what is planned per run; a connection that turns out not to keep what it
// prepared (a transaction pooler) ends naming, and what failed runs again. PostgreSQL only
// (TEST_DATABASE_URL): PGlite's adapter prepares nothing. Through PgBouncer: test/faults/pgbouncer.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, type Store, type StoreOptions } from "../../src/platform/db/database.ts";
import { sqlState } from "../../src/platform/db/pg-errors.ts";
import { PLANNED_PER_RUN } from "../../src/platform/db/prepared-statements.ts";
import { createDatabase } from "../support/live-server.ts";

const serverUrl = process.env.TEST_DATABASE_URL;

describe.skipIf(!serverUrl)("prepared statements on PostgreSQL", () => {
  let url: string;
  let drop: () => Promise<void>;
  const stores: Store[] = [];
  beforeAll(async () => {
    const database = await createDatabase(serverUrl as string);
    url = database.url;
    drop = database.drop;
  });
  afterAll(async () => {
    for (const store of stores) await store.close();
    await drop?.();
  });

  /** A store with one connection for reads and one for writes, so a test knows which one ran what. */
  const open = async (options: Partial<StoreOptions> = {}) => {
    const store = await openStore({ databaseUrl: url, poolSize: 1, readPoolSize: 1, ...options });
    stores.push(store);
    return store;
  };
  /** What the read connection has prepared (a statement with no parameters is never named). */
  const prepared = async (store: Store) =>
    (
      await store.db.$queryRawUnsafe<{ statement: string }[]>(
        "SELECT statement FROM pg_prepared_statements ORDER BY prepare_time",
      )
    ).map((row) => row.statement);

  it("prepare a statement with parameters once on a connection, unless it is planned per run", async () => {
    const store = await open();
    for (const n of [1, 2]) {
      expect(await store.db.$queryRaw`SELECT ${n}::int AS n`).toEqual([{ n }]);
      expect(await store.db.$queryRaw`SELECT ${n}::int AS m WHERE ${PLANNED_PER_RUN} true`).toEqual([{ m: n }]);
    }
    expect(await prepared(store)).toEqual(["SELECT $1::int AS n"]);
  });

  it("prepare nothing when turned off", async () => {
    const store = await open({ preparedStatements: false });
    expect(await store.db.$queryRaw`SELECT ${1}::int AS n`).toEqual([{ n: 1 }]);
    expect(await prepared(store)).toEqual([]);
  });

  it("end at a statement the connection did not keep: the read, or the whole transaction, runs again unnamed", async () => {
    const lost: unknown[] = [];
    const store = await open({ onPreparedStatementsLost: (error) => lost.push(error) });
    const select = (db: Store["db"]) => db.$queryRaw<{ n: number }[]>`SELECT ${7}::int AS n`;
    expect(await store.transaction(select)).toEqual([{ n: 7 }]);
    // DEALLOCATE ALL makes the write connection forget, as a pooler's next server connection would not know.
    let attempts = 0;
    const answer = await store.transaction(async (tx) => {
      attempts++;
      await tx.$executeRawUnsafe("DEALLOCATE ALL");
      return select(tx);
    });
    expect(answer).toEqual([{ n: 7 }]);
    expect(attempts).toBe(2);
    expect(lost.map(sqlState)).toEqual(["26000"]);
    // From then on nothing is named, reads included.
    expect(await select(store.db)).toEqual([{ n: 7 }]);
    expect(await prepared(store)).toEqual([]);
  });
});

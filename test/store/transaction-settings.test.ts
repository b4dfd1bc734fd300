// A write transaction on PostgreSQL runs under the statement timeout and without JIT, set with
// its BEGIN (src/platform/db/pg/pg-pools.ts): per transaction, as PgBouncer in transaction mode requires,
// and without a round trip of its own. PostgreSQL only (TEST_DATABASE_URL): the embedded store
// runs one statement at a time in this process and has neither setting.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../src/platform/db/database.ts";
import { committing, withCommit } from "../../src/platform/db/sql-client.ts";
import { createDatabase } from "../support/live-server.ts";

const serverUrl = process.env.TEST_DATABASE_URL;

describe.skipIf(!serverUrl)("write transactions on PostgreSQL", () => {
  let store: Store;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const database = await createDatabase(serverUrl as string);
    drop = database.drop;
    store = await openStore({ databaseUrl: database.url, statementTimeoutMs: 700 });
  });
  afterAll(async () => {
    await store?.close();
    await drop?.();
  });

  it("run with the statement timeout and JIT off", async () => {
    const settings = () =>
      store.transaction(
        (tx) => tx.$queryRaw<{ timeout: string; jit: string }[]>`
          SELECT current_setting('statement_timeout') AS timeout, current_setting('jit') AS jit`,
      );
    expect(await settings()).toEqual([{ timeout: "700ms", jit: "off" }]);
    expect(await settings()).toEqual([{ timeout: "700ms", jit: "off" }]);
  });

  it("are transactions from their first statement, which carries the BEGIN", async () => {
    // now() is the transaction's start: the same in both statements only inside one transaction.
    const [first, second] = await store.transaction(async (tx) => {
      const [a] = await tx.$queryRaw<{ at: Date }[]>`SELECT now() AS at FROM pg_sleep(0.01)`;
      const [b] = await tx.$queryRaw<{ at: Date }[]>`SELECT now() AS at`;
      return [a, b];
    });
    expect(second?.at).toEqual(first?.at);
    // An ended transaction leaves none open on its connection: a new one starts afresh.
    const [later] = await store.transaction((tx) => tx.$queryRaw<{ at: Date }[]>`SELECT now() AS at`);
    expect(later?.at.getTime()).toBeGreaterThan(first?.at.getTime() ?? 0);
    // A transaction that sends nothing sends no BEGIN either, and leaves nothing open.
    await store.transaction(async () => undefined);
    await expect(store.transaction(async () => Promise.reject(new Error("before any statement")))).rejects.toThrow(
      "before any statement",
    );
    const [open] = await store.transaction(
      (tx) => tx.$queryRaw<{ others: number }[]>`
      SELECT count(*)::int AS others FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%'`,
    );
    expect(open?.others).toBe(0);
  });

  it("send a last statement with the COMMIT, and roll back when it fails", async () => {
    await store.primaryDb.$executeRaw`CREATE TABLE IF NOT EXISTS closing_test (n int PRIMARY KEY)`;
    await store.transaction(async (tx) => {
      await tx.$executeRaw`INSERT INTO closing_test VALUES (1)`;
      await withCommit(tx).$executeRaw`INSERT INTO closing_test VALUES (2)`;
    });
    // A statement after it takes it along, before it in one round trip: with its values, and
    // its rows (when it has any) dropped.
    const seen = await store.transaction(async (tx) => {
      await withCommit(tx).$executeRaw`INSERT INTO closing_test VALUES (${3}) RETURNING n`;
      return tx.$queryRaw<{ n: number }[]>`SELECT n FROM closing_test WHERE n > ${0} ORDER BY n`;
    });
    expect(seen.map((row) => row.n)).toEqual([1, 2, 3]);
    // Its error is the commit's: nothing of the transaction is kept, and no transaction is left open.
    const failing = store.transaction(async (tx) => {
      await tx.$executeRaw`INSERT INTO closing_test VALUES (4)`;
      await withCommit(tx).$executeRaw`INSERT INTO closing_test VALUES (1)`;
    });
    await expect(failing).rejects.toThrow(/unique|duplicate/i);
    const [after] = await store.transaction(
      (tx) => tx.$queryRaw<{ ns: number[]; others: number }[]>`
      SELECT array_agg(n ORDER BY n) AS ns,
             (SELECT count(*)::int FROM pg_stat_activity WHERE datname = current_database()
                AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%') AS others
      FROM closing_test`,
    );
    expect(after).toEqual({ ns: [1, 2, 3], others: 0 });
  });

  it("commit with a last statement whose answer is read, and roll back when it fails", async () => {
    await store.primaryDb.$executeRaw`CREATE TABLE IF NOT EXISTS committing_test (n int PRIMARY KEY)`;
    const others = async () => {
      const [row] = await store.primaryDb.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%'`;
      return row?.n;
    };
    // Its answer is the statement's, and the transaction has committed when it comes.
    const answered = await store.transaction(async (tx) => {
      await tx.$executeRaw`INSERT INTO committing_test VALUES (1)`;
      const rows = await committing(tx).$queryRaw<{ n: number }[]>`INSERT INTO committing_test VALUES (2) RETURNING n`;
      expect(await others()).toBe(0);
      return rows;
    });
    expect(answered).toEqual([{ n: 2 }]);
    // As a transaction's first statement, it carries the BEGIN too.
    await store.transaction((tx) => committing(tx).$executeRaw`INSERT INTO committing_test VALUES (3)`);
    // Its error: nothing of the transaction is kept, and no transaction is left open.
    const failing = store.transaction(async (tx) => {
      await tx.$executeRaw`INSERT INTO committing_test VALUES (4)`;
      await committing(tx).$executeRaw`INSERT INTO committing_test VALUES (1)`;
    });
    await expect(failing).rejects.toThrow(/unique|duplicate/i);
    // A statement after it has no transaction to run in: it fails, and sends nothing.
    const after = store.transaction(async (tx) => {
      await committing(tx).$executeRaw`INSERT INTO committing_test VALUES (5)`;
      await tx.$executeRaw`INSERT INTO committing_test VALUES (6)`;
    });
    await expect(after).rejects.toThrow("a statement was sent after its transaction committed with its last statement");
    const kept = await store.primaryDb.$queryRaw<{ n: number }[]>`SELECT n FROM committing_test ORDER BY n`;
    expect(kept.map((row) => row.n)).toEqual([1, 2, 3, 5]);
    expect(await others()).toBe(0);
  });

  it("have a statement that runs past the timeout cancelled by the server", async () => {
    const slow = store.transaction((tx) => tx.$queryRaw`SELECT pg_sleep(5)`);
    await expect(slow).rejects.toThrow(/statement timeout/);
  });
});

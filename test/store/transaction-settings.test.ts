// A write transaction on PostgreSQL runs under the statement timeout and without JIT, set with
// its BEGIN (src/platform/db/pg-pools.ts): per transaction, as PgBouncer in transaction mode requires,
// and without a round trip of its own. PostgreSQL only (TEST_DATABASE_URL): the embedded store
// runs one statement at a time in this process and has neither setting.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../src/platform/db/database.ts";
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

  it("have a statement that runs past the timeout cancelled by the server", async () => {
    const slow = store.transaction((tx) => tx.$queryRaw`SELECT pg_sleep(5)`);
    await expect(slow).rejects.toThrow(/statement timeout/);
  });
});

// The store's statements go to Prisma's driver adapters directly (src/platform/db/sql-client.ts), with the
// values Prisma's client gave the repositories before: these are the conversions they rely on, and
// the transaction's commit and rollback. On the embedded store, and on PostgreSQL with
// TEST_DATABASE_URL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../src/platform/db/database.ts";
import { sqlState } from "../../src/platform/db/pg-errors.ts";
import { createDatabase } from "../support/live-server.ts";

const serverUrl = process.env.TEST_DATABASE_URL;

describe(`statements through the driver adapter (${serverUrl ? "PostgreSQL" : "embedded"})`, () => {
  let store: Store;
  let drop = async () => {};
  beforeAll(async () => {
    if (serverUrl) {
      const database = await createDatabase(serverUrl);
      drop = database.drop;
      store = await openStore({ databaseUrl: database.url });
    } else {
      store = await openStore({});
    }
    await store.db.$executeRaw`CREATE TABLE scratch (id int PRIMARY KEY, note text)`;
  });
  afterAll(async () => {
    await store?.close();
    await drop();
  });

  it("return values as the repositories read them", async () => {
    const [row] = await store.db.$queryRaw<Record<string, unknown>[]>`
      SELECT 9007199254740993::int8 AS big, 42::int4 AS small, 1.25::numeric AS exact, true AS yes,
             '2026-11-26T01:02:03.456Z'::timestamptz AS at, '{"a":[1,"x"]}'::jsonb AS doc,
             '[2]'::json AS list, ARRAY['a','b'] AS words, ARRAY[1,2]::int8[] AS bigs,
             '\\x0102ff'::bytea AS bytes, NULL::text AS nothing, 'b101'::varbit AS bits`;
    expect(row).toEqual({
      big: 9007199254740993n,
      small: 42,
      exact: expect.anything(),
      yes: true,
      at: new Date("2026-11-26T01:02:03.456Z"),
      doc: { a: [1, "x"] },
      list: [2],
      words: ["a", "b"],
      bigs: [1n, 2n],
      bytes: new Uint8Array([1, 2, 255]),
      nothing: null,
      bits: "101",
    });
    expect(String(row?.exact)).toBe("1.25");
  });

  it("send parameters as Prisma's client did", async () => {
    const [row] = await store.db.$queryRaw<Record<string, unknown>[]>`
      SELECT ${12345678901234n}::int8 + 1 AS big, ${new Date("2026-01-02T03:04:05.006Z")}::timestamptz AS at,
             ${{ k: "v" }}::jsonb ->> 'k' AS field, ${Buffer.from([7, 8])}::bytea AS bytes,
             cardinality(${["x", "y", "z"]}::text[]) AS n, ${undefined}::text IS NULL AS absent, ${2.5}::float8 AS half`;
    expect(row).toEqual({
      big: 12345678901235n,
      at: new Date("2026-01-02T03:04:05.006Z"),
      field: "v",
      bytes: new Uint8Array([7, 8]),
      n: 3,
      absent: true,
      half: 2.5,
    });
  });

  it("commit a transaction whose function resolves, and roll back one whose function throws", async () => {
    await store.transaction((tx) => tx.$executeRaw`INSERT INTO scratch VALUES (1, 'kept')`);
    const failure = new Error("changed my mind");
    await expect(
      store.transaction(async (tx) => {
        await tx.$executeRaw`INSERT INTO scratch VALUES (2, 'dropped')`;
        throw failure;
      }),
    ).rejects.toBe(failure);
    // The rolled-back transaction's connection is back in service, outside any transaction.
    const count = await store.transaction((tx) => tx.$executeRaw`UPDATE scratch SET note = note || '!'`);
    expect(count).toBe(1);
    expect(await store.db.$queryRaw`SELECT id, note FROM scratch ORDER BY id`).toEqual([{ id: 1, note: "kept!" }]);
  });

  it("report a failed statement with its SQLSTATE, and roll back the transaction it was in", async () => {
    const duplicate = store.transaction(async (tx) => {
      await tx.$executeRaw`INSERT INTO scratch VALUES (3, 'new')`;
      await tx.$executeRaw`INSERT INTO scratch VALUES (1, 'again')`;
    });
    await expect(duplicate).rejects.toSatisfy((error) => sqlState(error) === "23505");
    expect(await store.db.$queryRaw`SELECT id FROM scratch ORDER BY id`).toEqual([{ id: 1 }]);
  });
});

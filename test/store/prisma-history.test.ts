// Prisma keeps the arguments of its recent debug calls (whole queries with their parameters) for
// crash reports. A write transaction must not leave a bulk import's parameters behind in them.
import { getLogs } from "@prisma/debug";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../src/store/database.ts";
import { createDatabase } from "../support/live-server.ts";

let store: Store;
let drop: (() => Promise<void>) | undefined;
beforeAll(async () => {
  const database = process.env.TEST_DATABASE_URL ? await createDatabase(process.env.TEST_DATABASE_URL) : undefined;
  drop = database?.drop;
  store = await openStore({ databaseUrl: database?.url });
});
afterAll(async () => {
  await store.close();
  await drop?.();
});

const remembered = (marker: string) => getLogs(Number.MAX_SAFE_INTEGER).includes(marker);

describe("Prisma's debug history", () => {
  it("holds a query's parameters after a plain read (what the transaction clears)", async () => {
    const marker = `read-${"r".repeat(20_000)}`;
    await store.db.$queryRaw`SELECT length(${marker}::text)`;
    expect(remembered(marker)).toBe(true);
  });

  it("holds nothing of a write transaction's parameters once it ends, committed or not", async () => {
    const committed = `committed-${"c".repeat(200_000)}`;
    await store.transaction((tx) => tx.$queryRaw`SELECT length(${committed}::text)`);
    expect(remembered(committed)).toBe(false);

    const failed = `failed-${"f".repeat(200_000)}`;
    await expect(store.transaction((tx) => tx.$queryRaw`SELECT length(${failed}::text) / 0`)).rejects.toThrow();
    expect(remembered(failed)).toBe(false);
  });
});

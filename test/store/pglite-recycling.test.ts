// The embedded store on disk replaces its PGlite instance when the process's memory has grown past
// a bound (PGlite's WebAssembly memory never shrinks; dropping the instance gives it back), only
// between statements and transactions, and nothing written is lost by it.
import { mkdtemp, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../src/platform/db/database.ts";
import { databaseFault } from "../../src/platform/db/pg-errors.ts";
import type { SqlClient } from "../../src/platform/db/sql-client.ts";

const onEmbedded = !process.env.TEST_DATABASE_URL;

const dirs: string[] = [];

/** One store on disk for the file, whose memory the tests say, and the replacements it reports. */
const memory = { bytes: 0 };
const replaced: number[] = [];
let store: Store;
let dataDir: string;

beforeAll(async () => {
  if (!onEmbedded) return;
  dataDir = await mkdtemp(join(tmpdir(), "audience-recycling-"));
  dirs.push(dataDir);
  store = await openStore({
    dataDir,
    recycling: {
      measure: () => memory.bytes,
      boundBytes: 1_000,
      minIntervalMs: 0,
      measureEveryMs: 0,
      onRecycled: (waitedMs) => replaced.push(waitedMs),
    },
  });
  await store.db.$executeRawUnsafe("CREATE TABLE kept (id int PRIMARY KEY, note text)");
}, 120_000);

beforeEach(async () => {
  if (!onEmbedded) return;
  await store.db.$executeRawUnsafe("TRUNCATE kept");
  replaced.length = 0;
});

afterAll(async () => {
  await store?.close();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** The process's memory past the bound since the instance opened (the next replacement's measure). */
const grow = () => {
  memory.bytes += 10_000;
};

const notes = async (client: Pick<SqlClient, "$queryRawUnsafe">) =>
  (await client.$queryRawUnsafe<{ note: string }[]>("SELECT note FROM kept ORDER BY id")).map((row) => row.note);

/** What PostgreSQL says of its own process: a new instance starts a new backend. */
const startedAt = async (store: Store) =>
  (await store.db.$queryRawUnsafe<{ at: Date }[]>("SELECT pg_postmaster_start_time() AS at"))[0]?.at.getTime();

describe.runIf(onEmbedded)("the embedded store's PGlite instance", () => {
  it("is replaced between transactions once memory grew past the bound, with the data kept", async () => {
    await store.transaction(async (tx) => {
      await tx.$executeRawUnsafe("INSERT INTO kept VALUES (1, 'before')");
    });
    const firstStart = await startedAt(store);
    expect(replaced).toEqual([]);

    grow();
    // The statement that ends with the memory past the bound leaves the instance to be replaced.
    await store.db.$queryRawUnsafe("SELECT 1");
    await store.transaction(async (tx) => {
      await tx.$executeRawUnsafe("INSERT INTO kept VALUES (2, 'after')");
    });

    expect(replaced).toHaveLength(1);
    expect(await startedAt(store)).toBeGreaterThan(firstStart ?? Number.POSITIVE_INFINITY);
    expect(await notes(store.db)).toEqual(["before", "after"]);
  }, 30_000);

  it("is not replaced while a transaction is open, and is once it has ended", async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let inside = () => {};
    const entered = new Promise<void>((resolve) => {
      inside = resolve;
    });
    const writing = store.transaction(async (tx) => {
      await tx.$executeRawUnsafe("INSERT INTO kept VALUES (1, 'first')");
      inside();
      await held;
      await tx.$executeRawUnsafe("INSERT INTO kept VALUES (2, 'second')");
    });
    await entered;
    grow();
    // A read waits for the transaction (PGlite runs one thing at a time), then sees its rows.
    const reading = notes(store.db);
    await new Promise((resolve) => setImmediate(resolve));
    expect(replaced).toEqual([]);
    release();
    await writing;
    expect(await reading).toEqual(["first", "second"]);
    // The next statement waits for the replacement the transaction's end left to do.
    expect(await notes(store.db)).toEqual(["first", "second"]);
    expect(replaced).toHaveLength(1);
  }, 30_000);

  it("holds the statements that arrive during a replacement until the new instance answers", async () => {
    await store.db.$executeRawUnsafe("INSERT INTO kept VALUES (1, 'one')");
    grow();
    await store.db.$queryRawUnsafe("SELECT 1");
    // Sent while the old instance closes and the new one opens.
    const answers = await Promise.all([notes(store.db), notes(store.db), store.transaction((tx) => notes(tx))]);
    expect(answers).toEqual([["one"], ["one"], ["one"]]);
    expect(replaced).toHaveLength(1);
  }, 30_000);

  it("answers as unavailable while its directory cannot be opened again, and recovers once it can", async () => {
    await store.db.$executeRawUnsafe("INSERT INTO kept VALUES (1, 'one')");
    grow();
    await store.db.$queryRawUnsafe("SELECT 1");
    // The directory moved away while the instance is replaced: nothing to open, and no new
    // database made in its place.
    await rename(join(dataDir, "pglite"), join(dataDir, "moved"));
    const failed = await notes(store.db).catch((error: unknown) => error);
    expect(databaseFault(failed)).toBe("unavailable");
    await rename(join(dataDir, "moved"), join(dataDir, "pglite"));
    expect(await notes(store.db)).toEqual(["one"]);
  }, 30_000);
});

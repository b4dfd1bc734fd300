// The embedded store's write-ahead log stays bounded. PGlite runs PostgreSQL in single-user mode,
// with no checkpointer: before the store ran its own checkpoints, the WAL grew with every write
// (721 MB of a 1.1 GB data directory after a large import) and a restart kept it.
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { openStore, type Store } from "../../src/platform/db/database.ts";
import { CHECKPOINT_AFTER_BYTES, walRepo } from "../../src/platform/db/wal-checkpoints.ts";
import { registry } from "../../src/platform/metrics.ts";

const onEmbedded = !process.env.TEST_DATABASE_URL;
const SEGMENT = 16 * 1024 * 1024;
// max_wal_size's two segments kept for reuse, the one being written and the one after it.
const MOST_SEGMENTS = 4;

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const segments = async (dataDir: string) =>
  (await readdir(join(dataDir, "pglite", "pg_wal"))).filter((name) => /^[0-9A-F]{24}$/.test(name)).length;

const metric = async (part: string) => {
  const values = (await registry.getSingleMetric("audience_db_data_dir_bytes")?.get())?.values ?? [];
  return values.find((value) => value.labels.part === part)?.value;
};

describe.runIf(onEmbedded)("the embedded store's write-ahead log", () => {
  it("is checkpointed while the store runs and keeps a few segments across a restart", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "audience-wal-"));
    dirs.push(dataDir);
    let store: Store = await openStore({ dataDir });
    // About 100 MB of WAL in one go, several times the checkpoint threshold: without checkpoints
    // every byte of it would stay in pg_wal.
    await store.db.$executeRawUnsafe("CREATE TABLE ballast (id int PRIMARY KEY, payload text)");
    for (let round = 0; round < 5; round++) {
      await store.db.$executeRawUnsafe(
        `INSERT INTO ballast SELECT g, repeat(md5(g::text), 8) FROM generate_series(${round * 50_000 + 1}, ${(round + 1) * 50_000}) AS g`,
      );
    }
    // The store notices the WAL written since its last checkpoint and checkpoints by itself.
    await vi.waitFor(async () => expect(await walRepo.sinceCheckpoint(store.db)).toBeLessThan(CHECKPOINT_AFTER_BYTES), {
      timeout: 30_000,
      interval: 200,
    });
    const wal = await metric("wal");
    expect(wal).toBeGreaterThan(0);
    expect(await metric("total")).toBeGreaterThan(wal ?? 0);
    await store.close();
    expect(await metric("total")).toBeUndefined();

    store = await openStore({ dataDir });
    expect(await segments(dataDir)).toBeLessThanOrEqual(MOST_SEGMENTS);
    expect(await metric("wal")).toBeLessThanOrEqual(MOST_SEGMENTS * SEGMENT);
    const [row] = await store.db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM ballast`;
    expect(row?.n).toBe(250_000);
    await store.close();
  }, 120_000);
});

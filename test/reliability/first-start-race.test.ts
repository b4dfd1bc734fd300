import { afterEach, describe, expect, it } from "vitest";
import { createServices } from "../../src/composition.ts";
import { openStore, type Store } from "../../src/platform/db/database.ts";
import { createDatabase } from "../support/live-server.ts";

/**
 * Two processes first-starting on one empty database used to create a "Default workspace" and
 * key each (2 trials in 8). The check is now repeated under a lock that the second waits for.
 * Each trial is two stores (as two processes have) bootstrapping the same new database at once.
 */
const TRIALS = 8;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.runIf(process.env.TEST_DATABASE_URL)("two processes first-starting on one empty database", () => {
  it("create exactly one workspace and one key", async () => {
    for (let trial = 0; trial < TRIALS; trial++) {
      const database = await createDatabase(process.env.TEST_DATABASE_URL ?? "", "audience_first_start");
      cleanups.push(() => database.drop());
      const stores: Store[] = await Promise.all(
        [1, 2].map(() => openStore({ databaseUrl: database.url, poolSize: 2 })),
      );
      cleanups.push(async () => {
        await Promise.all(stores.map((store) => store.close()));
      });
      const started = await Promise.all(stores.map((store) => createServices(store).admin.bootstrap()));
      expect(started.filter(Boolean), `trial ${trial}`).toHaveLength(1);
      const workspaces = await createServices(stores[0] as Store).admin.listWorkspaces();
      expect(
        workspaces.results.map((w) => w.name),
        `trial ${trial}`,
      ).toEqual(["Default workspace"]);
      const [keys] = await (stores[0] as Store).db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM api_keys`;
      expect(keys?.n).toBe(1);
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    }
  });
});

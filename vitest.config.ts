import { defineConfig } from "vitest/config";

// The tests that start server processes, kill them, or stop databases run on their own, one
// file at a time, after the others: their timings (a kill at a given row, a lease running out)
// must not compete with other files for the machine's cores. The others run two files at once.
const ALONE = ["test/reliability/**/*.test.ts", "test/faults/**/*.test.ts"];

export default defineConfig({
  test: {
    // Each API test file starts its own server and store (an embedded one loaded from the run's
    // template, or a PostgreSQL database of its own): a few seconds on a 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    globalSetup: ["test/support/client-build.ts", "test/support/embedded-template.ts"],
    projects: [
      {
        extends: true,
        test: { name: "shared", include: ["test/**/*.test.ts"], exclude: ALONE, maxWorkers: 2 },
      },
      {
        extends: true,
        test: { name: "alone", include: ALONE, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});

import { defineConfig } from "vitest/config";
import { chromiumFound, chromiumMissingReporter } from "./test/support/chromium.ts";

// Four tiers. "unit": tests of code with fakes, in seconds, without a store (npm run test:unit).
// "shared": API, store, SDK and contract tests, two files at once; each starts its own server and
// store (an embedded one loaded from the run's template, or a PostgreSQL database of its own).
// "alone": tests that start server processes, kill them, or stop databases, one file at a time
// after the others: their timings (a kill at a given row, a lease running out) must not compete
// with other files for the machine's cores.
const UNIT = ["test/unit/**/*.test.ts"];
// The console in a real browser (Debian's chromium), against a server on the embedded store: run
// by the embedded pass of the suite only, since the store behind the API is the API tests' concern.
// Without chromium they are left out, and the run says so at its end; under CI=true they stay, and
// their global setup fails the run (test/support/chromium.ts).
const BROWSER = ["test/console/**/*.test.ts"];
const browserPass = !process.env.TEST_DATABASE_URL;
const withBrowser = browserPass && (chromiumFound() || process.env.CI === "true");
const ALONE = ["test/reliability/**/*.test.ts", "test/faults/**/*.test.ts"];
// The SDK package's build (once per run, when its sources changed) and the embedded store's template.
const SERVER_SETUP = ["test/support/client-build.ts", "test/support/embedded-template.ts"];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    ...(browserPass && !withBrowser ? { reporters: ["default", chromiumMissingReporter()] } : {}),
    hookTimeout: 120_000,
    projects: [
      { extends: true, test: { name: "unit", include: UNIT, maxWorkers: 2 } },
      {
        extends: true,
        test: {
          name: "shared",
          include: ["test/**/*.test.ts"],
          exclude: [...UNIT, ...ALONE, ...BROWSER],
          globalSetup: SERVER_SETUP,
          maxWorkers: 2,
        },
      },
      ...(!withBrowser
        ? []
        : [
            {
              extends: true as const,
              test: {
                name: "browser",
                include: BROWSER,
                // chromium first: a run that cannot drive it fails before the servers are prepared.
                globalSetup: ["test/support/console-build.ts", ...SERVER_SETUP],
                maxWorkers: 1,
              },
            },
          ]),
      {
        extends: true,
        test: {
          name: "alone",
          include: ALONE,
          globalSetup: SERVER_SETUP,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});

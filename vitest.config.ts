import { defineConfig } from "vitest/config";
import { chromiumFound, chromiumMissingReporter } from "./test/support/chromium.ts";

// Five tiers. "unit": tests of code with fakes, in seconds, without a store (npm run test:unit).
// "shared": API, store, SDK and contract tests, two files at once, in two worker processes that
// each run their files one after another without isolation (isolate: false): the modules are
// loaded and the contract's validators compiled once per worker, and the fixture's server (an
// embedded store loaded from the run's template, or a PostgreSQL database of its own) is started
// once per worker and shared by its files, each test in a fresh workspace (test/support/fixture.ts).
// A file that needs other settings, or reads the whole store, starts a server of its own.
// "one-store": tests whose subject is not the store behind the server (below), run the same way.
// "alone": tests that start server processes, kill them, or stop databases, one file at a time
// after the others: their timings (a kill at a given row, a lease running out) must not compete
// with other files for the machine's cores.
//
// Which CI pass runs what (.ci/run): the embedded pass runs every tier (npm test); the PostgreSQL
// pass runs "shared" and "alone" only, since "unit" and "one-store" would repeat what the embedded
// pass showed; the PgBouncer pass runs the files of scripts/test-pgbouncer.ts. `npm test` with
// TEST_DATABASE_URL still runs every tier, on PostgreSQL.
const UNIT = ["test/unit/**/*.test.ts"];
// The console in a real browser (Debian's chromium), against a server on the embedded store: run
// by the embedded pass of the suite only, since the store behind the API is the API tests' concern.
// Without chromium they are left out, and the run says so at its end; under CI=true they stay, and
// their global setup fails the run (test/support/chromium.ts).
const BROWSER = ["test/console/**/*.test.ts"];
const browserPass = !process.env.TEST_DATABASE_URL;
const withBrowser = browserPass && (chromiumFound() || process.env.CI === "true");
const ALONE = ["test/reliability/**/*.test.ts", "test/faults/**/*.test.ts"];
// Files whose answers do not depend on which store the server has: what they test sits in front
// of it (HTTP, the contract check, the CLI, the SDK package, the docs) or uses no store at all.
// A server they start may be on either store; the embedded pass's is enough. Every operation
// they call has its own API test in "shared", which runs on both stores.
const ONE_STORE = [
  // The contract checker and the contract's own rules: no server.
  "test/contract/**/*.test.ts",
  // Prism's mock of the contract: no store at all.
  "test/mock/**/*.test.ts",
  // The CLI against a fake service, and, as any client would, against a live one.
  "test/cli/**/*.test.ts",
  // The SDK's own behaviour: its types, its tokens against a fake fetch, the contract check
  // catching a broken server (always an embedded store of its own), the packed tarball, the
  // guides' examples and shell blocks run as a consumer would, the /docs page.
  "test/client/sdk-types.test.ts",
  "test/client/sdk-consistency.test.ts",
  "test/client/broken-server.test.ts",
  "test/client/package-tarball.test.ts",
  "test/client/sdk-example.test.ts",
  "test/client/sdk-recipes.test.ts",
  "test/client/doc-blocks.test.ts",
  "test/client/docs-page.test.ts",
  // `npm start` on an embedded data directory, whatever TEST_DATABASE_URL says.
  "test/api/first-start.test.ts",
  // The console's static files and their headers.
  "test/api/console-routes.test.ts",
  // The docs pages' headers, and requests refused below the contract before any handler runs.
  "test/security/docs-headers.test.ts",
  "test/security/transport-errors.test.ts",
];
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
          exclude: [...UNIT, ...ALONE, ...BROWSER, ...ONE_STORE],
          globalSetup: SERVER_SETUP,
          maxWorkers: 2,
          isolate: false,
        },
      },
      // Beside "shared" (same worker count, so vitest runs them together).
      {
        extends: true,
        test: { name: "one-store", include: ONE_STORE, globalSetup: SERVER_SETUP, maxWorkers: 2, isolate: false },
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
                // As "shared": the fixture's server once for the files, a workspace per test.
                isolate: false,
                // After "shared" and "one-store": vitest runs projects together only when they
                // have the same worker count, and one chromium at a time is what 2 cores bear.
                sequence: { groupOrder: 1 },
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
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});

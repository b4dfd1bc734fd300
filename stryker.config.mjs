// Mutation testing of the domain and the membership core with the unit tests (npm run
// test:mutation; CI runs it incrementally, see .ci/run). test/mutation/check-score.ts reads the
// report and fails below the thresholds per file, on covered mutants and on all of them.

/** The files mutated: the only list of them (update it when files move or new core code lands). */
export const MUTATED = [
  "src/features/membership/bitset.ts",
  "src/domain/cursor.ts",
  "src/features/membership/rules/filter.ts",
  "src/features/membership/rules/filter-match.ts",
  "src/features/membership/rules/audience-graph.ts",
  "src/domain/field-types.ts",
  "src/domain/durations.ts",
  "src/features/imports/import-columns.ts",
  "src/domain/member-identity.ts",
  "src/domain/member-merge.ts",
  "src/features/membership/member-set.ts",
  "src/features/membership/membership-service.ts",
  "src/features/membership/membership-writer.ts",
  "src/features/membership/net-changes.ts",
  "src/features/membership/write-locks.ts",
];

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  // related: each mutant runs only the test files that import its file (and only the tests covering it).
  vitest: { configFile: "test/mutation/vitest.config.ts", related: true },
  mutate: MUTATED,
  coverageAnalysis: "perTest",
  // The machine is shared: one test process unless CI (which has it to itself) says otherwise.
  concurrency: Number(process.env.STRYKER_CONCURRENCY ?? 1),
  // Only what changed since the committed result is run again (source or unit tests).
  incremental: true,
  incrementalFile: "test/mutation/incremental.json",
  reporters: ["json", "clear-text", "progress"],
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  // check-score.ts applies the per-file thresholds; this is the whole run's floor.
  thresholds: { high: 90, low: 85, break: 75 },
  tempDirName: ".stryker-tmp",
  cleanTempDir: true,
};

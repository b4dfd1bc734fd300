import { defineConfig } from "vitest/config";

// The unit tier alone, for Stryker: no store and so no embedded-store template (the default
// config's globalSetup), which would be built again for every mutant's test run.
export default defineConfig({
  test: {
    include: ["test/unit/**/*.test.ts"],
    testTimeout: 10_000,
  },
});

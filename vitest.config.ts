import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Each API test file starts its own server and store; the embedded store's first start and
    // the PostgreSQL database-per-file setup take a few seconds on a 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: process.env.CI ? ["default"] : ["default"],
  },
});

import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/**
 * The console is served by the API server at /console (see src/platform/http/console-routes.ts),
 * built into dist/console by scripts/build-console.ts. The SDK is bundled from its source, as the
 * console's tsconfig checks it.
 */
export default defineConfig({
  root: here("."),
  base: "/console/",
  resolve: { alias: { "@audience-service/client": here("../packages/client/src/index.ts") } },
  oxc: { jsx: { runtime: "automatic" } },
  build: {
    outDir: here("../dist/console"),
    emptyOutDir: true,
    // The server's content security policy allows this server's own scripts only: no inline ones.
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 1024,
    rolldownOptions: {
      // TanStack Query marks its modules "use client" for React Server Components; a browser bundle has none.
      onwarn(warning, warn) {
        if (warning.code !== "MODULE_LEVEL_DIRECTIVE") warn(warning);
      },
    },
  },
  logLevel: "warn",
});

import { buildConsole } from "../../scripts/build-console.ts";

/**
 * vitest's global setup of the browser tests: builds the console (dist/console) unless it was
 * built from the same sources, once per run, before any test opens it.
 */
export default function setup() {
  buildConsole();
}

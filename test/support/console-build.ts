import { buildConsole } from "../../scripts/build-console.ts";
import { requireChromium } from "./chromium.ts";

/**
 * vitest's global setup of the browser tests: fails the run when there is no chromium to drive
 * (vitest.config.ts keeps these tests in the run without one only under CI=true), then builds the
 * console (dist/console) unless it was built from the same sources, once per run, before any test
 * opens it.
 */
export default function setup() {
  requireChromium();
  buildConsole();
}

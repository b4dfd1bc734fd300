import { existsSync, readdirSync } from "node:fs";
import { isAbsolute, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import type { Reporter, TestRunEndReason, Vitest } from "vitest/node";

/** Debian's chromium: the browser tests never download a browser. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const INSTALL_CHROMIUM = "apt-get install chromium";

/** The browser tests' files (vitest.config.ts's "browser" project), from the repository's root. */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const browserFiles = () =>
  readdirSync(join(ROOT, "test/console"))
    .filter((name) => name.endsWith(".test.ts"))
    .map((name) => `test/console/${name}`);

/**
 * Whether the browser tests can run, decided once, when vitest reads its configuration. Without
 * chromium a workstation runs everything else and is told, at the end, which files it left out
 * and how to get them back (chromiumMissingReporter). Under CI=true the browser tests stay in the
 * run and their global setup fails it (requireChromium): there a missing browser is a broken
 * machine, and a suite that passes without its browser tests proves less than it says.
 */
export const chromiumFound = (): boolean => existsSync(CHROMIUM);

/** Fails the run that was to drive the browser when there is none (the browser project's global setup). */
export function requireChromium(): void {
  if (chromiumFound()) return;
  throw new Error(
    `No chromium at ${CHROMIUM}: the console's browser tests cannot run. ` +
      `Install it (${INSTALL_CHROMIUM}) or point CHROMIUM_PATH at one.`,
  );
}

/**
 * Says, after the run's own summary where nobody misses it, which browser test files the run left
 * out and the one command that brings them back. Quiet when the run did not ask for them (another
 * --project, or file filters that name none of them).
 */
export function chromiumMissingReporter(): Reporter {
  let vitest: Vitest | undefined;
  const asked = (): boolean => {
    if (vitest === undefined) return true;
    const projects = vitest.config.project;
    if (
      projects.length > 0 &&
      !projects.some((name) => new RegExp(`^${name.replaceAll("*", ".*")}$`).test("browser"))
    ) {
      return false;
    }
    // The run's file filters: not part of vitest's public API, so when they cannot be read the
    // message is printed, the safe side.
    const filters = (vitest as unknown as { filenamePattern?: unknown }).filenamePattern;
    if (!Array.isArray(filters) || filters.length === 0) return true;
    const names = filters.map((filter: string) =>
      isAbsolute(filter) ? relative(ROOT, filter) : filter.replace(/^\.\//, ""),
    );
    return browserFiles().some((file) => names.some((name) => file.includes(name)));
  };
  return {
    onInit(ctx) {
      vitest = ctx;
    },
    onTestRunEnd(_modules, _errors, reason: TestRunEndReason) {
      if (reason === "interrupted" || !asked()) return;
      const files = browserFiles();
      const rule = "!".repeat(78);
      process.stderr.write(
        [
          "",
          rule,
          `!! The browser tests did NOT run: no chromium at ${CHROMIUM}.`,
          `!! Left out, ${files.length} files:`,
          ...files.map((file) => `!!   ${file}`),
          `!! Install it, and they run with the rest:   ${INSTALL_CHROMIUM}`,
          "!! (or point CHROMIUM_PATH at a chromium; under CI=true a missing chromium fails the run)",
          rule,
          "",
        ].join("\n"),
      );
    },
  };
}

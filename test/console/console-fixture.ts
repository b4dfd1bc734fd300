import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import AxeBuilder from "@axe-core/playwright";
import { type Browser, chromium, type Page } from "playwright-core";
import { expect } from "vitest";
import { CHROMIUM } from "../support/chromium.ts";
import { test as api } from "../support/fixture.ts";

/** Screenshots of every test, for a person to look at (ignored by git). */
export const ARTEFACTS = fileURLToPath(new URL("../../artifacts/console/", import.meta.url));

export interface ConsolePage {
  page: Page;
  /** The API key the page signs in with (the test's workspace's). */
  key: string;
  /** Opens a console path ("" as the banner links, "/", "/fields") signed in to the test's workspace; waits for its heading. */
  open(path: string): Promise<void>;
  /** Saves a PNG of the page as artifacts/console/NAME.png. */
  screenshot(name: string): Promise<string>;
  /** Serious or critical accessibility violations on the page as it is now (axe-core), by rule id. */
  accessibilityViolations(): Promise<string[]>;
}

/**
 * The browser tests' fixture, on top of the API tests' (the worker's live server on the embedded
 * store, a fresh workspace per test): one chromium per file, a new tab context per test. Every
 * test ends with no script error and no content-security-policy violation in its page.
 */
export const test = api
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
  .extend("browser", { scope: "file" }, async ({}, { onCleanup }): Promise<Browser> => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    onCleanup(() => browser.close());
    return browser;
  })
  .extend("console", async ({ browser, server, ws }, { onCleanup }): Promise<ConsolePage> => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    // Outside Playwright's own runner nothing waits with a limit by default: a step that cannot
    // happen fails after 20 s, with what it waited for, instead of holding the test to its timeout.
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(`script error: ${error.message}`));
    page.on("console", (message) => {
      if (message.type() === "error" && /Content Security Policy|Refused to/.test(message.text())) {
        problems.push(`policy: ${message.text()}`);
      }
    });
    onCleanup(async () => {
      await context.close();
      expect(problems).toEqual([]);
    });
    mkdirSync(ARTEFACTS, { recursive: true });
    return {
      page,
      key: ws.key,
      async open(path) {
        await page.goto(`${server.baseUrl}/console${path}#key=${ws.key}`);
        await page.getByRole("heading", { level: 1 }).first().waitFor();
      },
      async screenshot(name) {
        const file = join(ARTEFACTS, `${name}.png`);
        await page.screenshot({ path: file, fullPage: true });
        return file;
      },
      async accessibilityViolations() {
        const { violations } = await new AxeBuilder({ page }).analyze();
        return violations
          .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
          .map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`);
      },
    };
  });

export const it = test;

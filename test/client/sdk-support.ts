import { execFile, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";

/** Where the README's examples are (packages/client/examples/*.ts), and where the build puts them. */
export const EXAMPLES_DIR = "packages/client/examples/";
const BUILT_EXAMPLES_DIR = `${EXAMPLES_DIR}dist/`;

/**
 * Runs the README's SDK example as a consumer would after a build (the test run's global setup
 * builds the package): `node packages/client/examples/dist/example.js` in its own process, with
 * API_URL, WORKSPACE_ID and API_KEY; resolves to its output lines.
 */
export function runExample(env: { API_URL: string; WORKSPACE_ID: string; API_KEY: string }): Promise<string[]> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [`${BUILT_EXAMPLES_DIR}example.js`],
      { cwd: REPO_ROOT, env: { ...process.env, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`the example failed: ${error.message}\n${stdout}\n${stderr}`));
        else resolve(stdout.trimEnd().split("\n"));
      },
    );
  });
}

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Starts a long-running README example (`node packages/client/examples/dist/<name>.js`, for
 * examples/<name>.ts) in its own process, for a test that watches its output while it runs; stop()
 * ends it.
 */
export function spawnExample(file: string, env: Record<string, string>) {
  const child = spawn(process.execPath, [BUILT_EXAMPLES_DIR + file.replace(/\.ts$/, ".js")], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (chunk) => (out += chunk));
  child.stderr.on("data", (chunk) => (out += chunk));
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  return {
    lines: () => out.trimEnd().split("\n"),
    /** Waits until a line of its output matches. */
    async waitFor(pattern: RegExp): Promise<void> {
      await expect
        .poll(() => out.split("\n").some((line) => pattern.test(line)), { timeout: 60_000, interval: 50 })
        .toBe(true);
    },
    async stop(): Promise<void> {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

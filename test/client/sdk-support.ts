import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * Runs the README's SDK example (src/client/example.ts) as a consumer would, in its own process
 * (`tsx src/client/example.ts`) with API_URL, WORKSPACE_ID and API_KEY; resolves to its output lines.
 */
export function runExample(env: { API_URL: string; WORKSPACE_ID: string; API_KEY: string }): Promise<string[]> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "src/client/example.ts"],
      { cwd: REPO_ROOT, env: { ...process.env, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`the example failed: ${error.message}\n${stdout}\n${stderr}`));
        else resolve(stdout.trimEnd().split("\n"));
      },
    );
  });
}

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

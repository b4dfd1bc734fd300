import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type AudienceClient, createAudienceClient } from "../../src/client/index.ts";
import { checkResponse } from "../support/contract.ts";

/** "METHOD /path/template" of every operation called through clients made by checkedClient(). */
export const operationsCalled = new Set<string>();

/**
 * The SDK as a consumer uses it, plus one openapi-fetch middleware that checks every response
 * against the contract (as the API tests' call() does) and records which operation was called.
 */
export function checkedClient(baseUrl: string, apiKey: string): AudienceClient {
  const api = createAudienceClient({ baseUrl, apiKey });
  api.raw.use({
    async onResponse({ request, response, schemaPath }) {
      operationsCalled.add(`${request.method} ${schemaPath}`);
      const url = new URL(request.url);
      checkResponse({
        method: request.method,
        url: url.pathname + url.search,
        status: response.status,
        headers: Object.fromEntries(response.headers.entries()),
        body: await response.clone().text(),
      });
    },
  });
  return api;
}

/** The rejection of a call, for asserting on the ApiError it carries. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to fail, but it succeeded");
}

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

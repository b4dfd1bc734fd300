import { usageError } from "./cli-errors.js";

export const DEFAULT_URL = "http://127.0.0.1:3000";

export interface CliConfig {
  /** Where the service is, without a trailing slash (the API's paths start with /v0). */
  baseUrl: string;
  apiKey: string;
  /** The workspace the commands address: the key's own, unless --workspace says otherwise. */
  workspaceId: string;
}

/**
 * The configuration from the environment (API_URL, API_KEY) and --workspace. A
 * workspace key names its workspace (`ak_<workspace>_…` → `ws_<workspace>`), so nothing else is
 * needed; checking the key's shape here turns a typo into a clear message instead of a 401.
 */
export function readConfig(env: NodeJS.ProcessEnv, workspaceOption: string | undefined): CliConfig {
  const baseUrl = readServiceUrl(env);
  const apiKey = env.API_KEY?.trim();
  if (!apiKey) {
    throw usageError(
      "API_KEY is not set. Set it to a workspace API key (ak_…): the server prints one on its first start, " +
        "and `audience-service keys create --workspace ws_…` makes more.",
    );
  }
  const keyWorkspace = workspaceOfKey(apiKey);
  if (!keyWorkspace) {
    throw usageError("API_KEY is not a workspace API key: expected ak_<workspace>_<key>_<secret>.");
  }
  if (workspaceOption !== undefined) checkWorkspaceId(workspaceOption);
  return {
    baseUrl,
    apiKey,
    workspaceId: workspaceOption ?? keyWorkspace,
  };
}

/**
 * Where the service is, without a trailing slash. API_URL is the name the SDK's examples and the
 * docs' shell blocks use too, so one `export API_URL=…` serves them all; AUDIENCE_SERVICE_URL, the
 * CLI's earlier name, still works when API_URL is not set.
 */
export function readServiceUrl(env: NodeJS.ProcessEnv): string {
  const fromApiUrl = env.API_URL?.trim();
  const name = fromApiUrl ? "API_URL" : "AUDIENCE_SERVICE_URL";
  const rawUrl = fromApiUrl || env.AUDIENCE_SERVICE_URL?.trim() || DEFAULT_URL;
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw usageError(`${name} is not a URL: ${JSON.stringify(rawUrl)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw usageError(`${name} must be an http:// or https:// URL, not ${JSON.stringify(rawUrl)}`);
  }
  return url.toString().replace(/\/+$/, "");
}

export function checkWorkspaceId(id: string): void {
  if (!/^ws_[0-9A-Za-z]+$/.test(id))
    throw usageError(`--workspace must be a workspace id (ws_…), not ${JSON.stringify(id)}`);
}

/**
 * The workspace a key belongs to, or undefined when the text is not shaped like a key. The shape
 * is the server's (src/domain/api-key.ts in the service's repository), copied rather than imported
 * because this package ships without the server; test/cli/server-rules.test.ts holds the two
 * in step.
 */
export function workspaceOfKey(token: string): string | undefined {
  const match = /^ak_([0-9A-Za-z]{20})_[0-9A-Za-z]{20}_[0-9A-Za-z]{32}$/.exec(token);
  return match ? `ws_${match[1]}` : undefined;
}

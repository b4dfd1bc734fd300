import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { checkResponse } from "../support/contract.ts";
import { createDatabase } from "../support/live-server.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const PROCESS_ADMIN_TOKEN = "reliability-admin-token-0123456789";

/** The real server (`node --import tsx src/main.ts`) in its own process group. */
export interface ServerProcess {
  baseUrl: string;
  child: ChildProcess;
  /** Printed on the first start of an empty store. */
  firstStart?: { workspaceId: string; apiKey: string };
  exited: Promise<void>;
  output(): string;
}

/** Starts the server on the store the environment names, and waits until it listens. */
export async function startServerProcess(storeEnv: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
      ADMIN_TOKEN: PROCESS_ADMIN_TOKEN,
      // The stream and the verification send far more than the default 6000 requests a minute.
      RATE_LIMIT_PER_MINUTE: "0",
      ...storeEnv,
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true, // its own process group, so a SIGKILL reaches anything it spawned
  });
  let out = "";
  child.stdout?.on("data", (chunk) => {
    out += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    out += chunk;
  });
  let done = false;
  const exited = new Promise<void>((resolve) =>
    child.on("exit", () => {
      done = true;
      resolve();
    }),
  );
  for (let waited = 0; ; waited += 50) {
    const address = /listening on (http:\/\/\S+)/.exec(out)?.[1];
    // The first-start lines are written just after the listening line.
    if (address && (!/First start/.test(out) || /API_KEY=\S+\n/.test(out))) {
      const workspaceId = /WORKSPACE_ID=(\S+)/.exec(out)?.[1];
      const apiKey = /API_KEY=(\S+)/.exec(out)?.[1];
      const firstStart = workspaceId && apiKey ? { workspaceId, apiKey } : undefined;
      return { baseUrl: address, child, exited, output: () => out, ...(firstStart ? { firstStart } : {}) };
    }
    if (done || waited > 90_000) {
      if (!done) await killProcessGroup({ child, exited });
      throw new Error(`the server did not start (exit code ${child.exitCode}):\n${out}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGKILLs the whole process group, then waits until no process of it is left. */
export async function killProcessGroup(server: Pick<ServerProcess, "child" | "exited">): Promise<void> {
  const pid = server.child.pid;
  if (pid === undefined) return;
  if (groupAlive(pid)) process.kill(-pid, "SIGKILL");
  await server.exited;
  for (let i = 0; groupAlive(pid); i++) {
    if (i > 200) throw new Error(`process group ${pid} survived SIGKILL`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** SIGTERM (graceful shutdown), and SIGKILL if it does not exit within 20 s. */
export async function stopServerProcess(server: ServerProcess): Promise<void> {
  const pid = server.child.pid;
  if (pid === undefined || !groupAlive(pid)) return;
  process.kill(-pid, "SIGTERM");
  const timer = setTimeout(() => void killProcessGroup(server), 20_000);
  await server.exited;
  clearTimeout(timer);
}

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/**
 * One request to the process with a workspace key (none: undefined), never waiting more than two
 * minutes; the answer is checked against the contract.
 */
export async function send<T = any>(
  server: { baseUrl: string },
  apiKey: string | undefined,
  method: string,
  path: string,
  body?: unknown,
  extraHeaders: Record<string, string> = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...extraHeaders };
  if (body !== undefined) headers["content-type"] = "application/json";
  return exchange(server, apiKey, method, path, headers, body === undefined ? undefined : JSON.stringify(body));
}

/** A CSV file as an import's raw text/csv body (send() would JSON-encode it); checked like send(). */
export function sendCsv<T = any>(
  server: { baseUrl: string },
  apiKey: string,
  path: string,
  csv: string,
): Promise<Reply<T>> {
  return exchange(server, apiKey, "POST", path, { "content-type": "text/csv" }, csv);
}

async function exchange<T>(
  server: { baseUrl: string },
  apiKey: string | undefined,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<Reply<T>> {
  if (apiKey !== undefined) headers.authorization = `Bearer ${apiKey}`;
  const response = await fetch(server.baseUrl + path, {
    method,
    headers,
    body,
    signal: AbortSignal.timeout(120_000),
  });
  const text = await response.text();
  checkResponse({
    method,
    url: path,
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: text,
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (text === "" ? undefined : JSON.parse(text)) as T,
  };
}

/** Every member of an audience (id and e-mail), walking all pages, and each page's totalCount. */
export async function listAudienceMembers(server: { baseUrl: string }, apiKey: string, path: string) {
  const members = new Map<string, string | null>();
  const totalCounts = new Set<number>();
  let after: string | undefined;
  for (;;) {
    const query = new URLSearchParams({ limit: "500", ...(after ? { after } : {}) });
    const page = await send(server, apiKey, "GET", `${path}?${query}`);
    if (page.status !== 200) throw new Error(`listing ${path} answered ${page.status}: ${JSON.stringify(page.body)}`);
    totalCounts.add(page.body.totalCount);
    for (const member of page.body.results as { id: string; email: string | null }[]) {
      if (members.has(member.id)) throw new Error(`listing ${path} returned ${member.id} twice`);
      members.set(member.id, member.email);
    }
    if (!page.body.pageInfo.hasNextPage) return { members, totalCounts: [...totalCounts] };
    after = page.body.pageInfo.endCursor;
  }
}

/** A PostgreSQL database of its own on TEST_DATABASE_URL's server, dropped afterwards. */
export const createTestDatabase = (serverUrl: string) => createDatabase(serverUrl, "audience_reliability");

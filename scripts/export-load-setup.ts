// The set-up of scripts/export-load.ts: requests, the server process, the seeded workspaces.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import http from "node:http";

const ROOT = new URL("../", import.meta.url).pathname;
export const ADMIN = "export-load-admin-token-0123456789";
export const log = (message: string) =>
  process.stderr.write(`[export-load ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  ms: number;
}

/** One request on a connection of its own, its body read whole (small answers only). */
export function request(base: string, method: string, path: string, token: string, body?: unknown): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${path}`, {
      method,
      agent: false,
      headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
    });
    req.setTimeout(120_000, () => req.destroy(new Error(`${method} ${path}: no answer in 120 s`)));
    req.on("error", reject);
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("error", reject);
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, ms: performance.now() - started }),
      );
    });
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

export async function expect(
  base: string,
  method: string,
  path: string,
  token: string,
  status: number,
  body?: unknown,
) {
  const answer = await request(base, method, path, token, body);
  if (answer.status !== status) throw new Error(`${method} ${path}: ${answer.status} ${answer.body.slice(0, 300)}`);
  return answer.body === "" ? undefined : JSON.parse(answer.body);
}

/** The server, started from dist/ as `npm start` starts it; its warnings and errors counted. */
export async function startServer() {
  const scripts = JSON.parse(readFileSync(`${ROOT}package.json`, "utf8")).scripts as Record<string, string>;
  const [, ...args] = (scripts.start ?? "").split(/\s+/);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: "0",
    HOST: "127.0.0.1",
    ADMIN_TOKEN: ADMIN,
    LOG_LEVEL: "warn",
    // Seeding sends 10,000 members per request.
    BODY_LIMIT: "16777216",
  };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  const messages = new Map<string, number>();
  let output = "";
  const onData = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
    for (const line of chunk.toString().split("\n")) {
      const msg = /"msg":"([^"]{0,80})/.exec(line)?.[1];
      if (msg) messages.set(msg, (messages.get(msg) ?? 0) + 1);
    }
  };
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start:\n${output}`)), 120_000);
    const watch = () => {
      const found = /listening on (http:\/\/\S+)/.exec(output);
      if (found) {
        clearTimeout(timer);
        resolve(found[1] as string);
      }
    };
    child.stdout.on("data", watch);
    child.on("exit", () => reject(new Error(`the server exited:\n${output}`)));
  });
  return {
    baseUrl,
    pid: child.pid as number,
    /** Log messages (warn and above) since the last call, counted. */
    takeMessages() {
      const taken = Object.fromEntries(messages);
      messages.clear();
      return taken;
    },
    async stop() {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The workspace of this name, created when the store has none; and `keys` fresh API keys of it. */
export async function workspace(base: string, name: string, keys: number) {
  const { results } = await expect(base, "GET", "/v0/workspaces", ADMIN, 200);
  const found = (results as { id: string; name: string }[]).find((w) => w.name === name);
  const id: string = found?.id ?? (await expect(base, "POST", "/v0/workspaces", ADMIN, 201, { name })).id;
  const tokens: string[] = [];
  for (let i = 0; i < keys; i++) {
    tokens.push((await expect(base, "POST", `/v0/workspaces/${id}/api-keys`, ADMIN, 201, { name: `load ${i}` })).key);
  }
  return { id, tokens };
}

/** Members m0000000… with an e-mail and the four named fields, up to `count`, 10,000 per request. */
export async function seed(base: string, ws: { id: string; tokens: string[] }, count: number) {
  const token = ws.tokens[0] as string;
  const page = await expect(base, "GET", `/v0/workspaces/${ws.id}/members?limit=1`, token, 200);
  const have = page.totalCount as number;
  if (have >= count) return;
  log(`seeding ${count - have} members (${have} there)`);
  for (let from = have; from < count; from += 10_000) {
    const members = Array.from({ length: Math.min(10_000, count - from) }, (_, i) => {
      const n = String(from + i).padStart(7, "0");
      return {
        id: `m${n}`,
        email: `m${n}@example.com`,
        fields: { firstName: `First${n}`, lastName: `Last${n}`, role: "Engineer", company: `Company ${n.slice(3)}` },
      };
    });
    await expect(base, "POST", `/v0/workspaces/${ws.id}/members`, token, 200, { members });
  }
}

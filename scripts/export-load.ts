// Exports under load: what 20 concurrent exports and 30 stalled export readers do to a server on
// PostgreSQL, and to another tenant's pages. Starts the built server (as `npm start` does) on a
// database of the caller's, seeds it once (kept for the next run), measures, stops by itself.
//
//   createdb -h 127.0.0.1 -U postgres exportload
//   DATABASE_URL=postgresql://postgres@127.0.0.1:5432/exportload npx tsx scripts/export-load.ts
//
// Options: --members N (300000), --exports N (20), --stalled N (30), --stall-seconds S (40),
// --keys N (API keys the exports are spread over, 5). Loopback only; every loop is bounded.
// Figures are printed as one JSON document; nothing is asserted.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import http from "node:http";
import { parseArgs } from "node:util";
import { procStatusMb } from "./bench/process-memory.ts";
import { buildService } from "./bench/processes.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const ADMIN = "export-load-admin-token-0123456789";
const log = (message: string) =>
  process.stderr.write(`[export-load ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

const { values: opts } = parseArgs({
  options: {
    members: { type: "string", default: "300000" },
    exports: { type: "string", default: "20" },
    stalled: { type: "string", default: "30" },
    "stall-seconds": { type: "string", default: "40" },
    keys: { type: "string", default: "5" },
  },
});
const MEMBERS = Number(opts.members);
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl || !["127.0.0.1", "localhost"].includes(new URL(databaseUrl).hostname)) {
  throw new Error("set DATABASE_URL to a PostgreSQL database on this machine (127.0.0.1)");
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  ms: number;
}

/** One request on a connection of its own, its body read whole (small answers only). */
function request(base: string, method: string, path: string, token: string, body?: unknown): Promise<Answer> {
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

async function expect(base: string, method: string, path: string, token: string, status: number, body?: unknown) {
  const answer = await request(base, method, path, token, body);
  if (answer.status !== status) throw new Error(`${method} ${path}: ${answer.status} ${answer.body.slice(0, 300)}`);
  return answer.body === "" ? undefined : JSON.parse(answer.body);
}

/** The server, started from dist/ as `npm start` starts it; its warnings and errors counted. */
async function startServer() {
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
async function workspace(base: string, name: string, keys: number) {
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
async function seed(base: string, ws: { id: string; tokens: string[] }, count: number) {
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

type Outcome = "completed" | "refused" | "cut" | "failed";

/** One export read to its end: completed (every line), refused (4xx/5xx before any byte), or cut. */
function exportOnce(base: string, path: string, token: string, accept: string, lines: number) {
  return new Promise<{ outcome: Outcome; status: number; ms: number }>((resolve) => {
    const started = performance.now();
    const done = (outcome: Outcome, status: number) => resolve({ outcome, status, ms: performance.now() - started });
    const req = http.request(`${base}${path}`, {
      agent: false,
      headers: { authorization: `Bearer ${token}`, accept },
    });
    req.setTimeout(300_000, () => req.destroy(new Error("no progress in 300 s")));
    req.on("error", () => done("failed", 0));
    req.on("response", (res) => {
      const status = res.statusCode ?? 0;
      let count = 0;
      res.on("data", (chunk: Buffer) => {
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) count++;
      });
      res.on("error", () => done(status === 200 ? "cut" : "failed", status));
      res.on("aborted", () => done(status === 200 ? "cut" : "failed", status));
      res.on("end", () => {
        if (status !== 200) done("refused", status);
        else done(count === lines ? "completed" : "cut", status);
      });
    });
    req.end();
  });
}

/**
 * The server's event loop delay (p99 and max, ms) since the last call: prom-client resets its
 * histogram at each scrape.
 */
async function loopDelay(base: string) {
  const { body } = await request(base, "GET", "/metrics", "");
  const value = (name: string) =>
    Math.round(
      1000 *
        Number(new RegExp(`^audience_nodejs_eventloop_lag_${name}_seconds (\\S+)$`, "m").exec(body)?.[1] ?? Number.NaN),
    );
  return { p99: value("p99"), max: value("max") };
}

function percentiles(ms: number[]) {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (p: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0);
  return { n: sorted.length, p50: at(50), p99: at(99), max: Math.round(sorted.at(-1) ?? 0) };
}

/** Another tenant's first page, then a one-member write, one after the other until `until` settles. */
async function otherTenant(base: string, other: { id: string; tokens: string[] }, until: Promise<unknown>, min = 100) {
  let settled = false;
  void until.then(() => {
    settled = true;
  });
  const pages: number[] = [];
  const writes: number[] = [];
  const failures: Record<string, number> = {};
  const token = other.tokens[0] as string;
  for (let i = 0; (!settled || i < min) && i < 5_000; i++) {
    const page = await request(base, "GET", `/v0/workspaces/${other.id}/members?limit=5`, token);
    if (page.status === 200) pages.push(page.ms);
    else failures[`GET ${page.status}`] = (failures[`GET ${page.status}`] ?? 0) + 1;
    if (i % 10 === 0) {
      const body = { members: [{ id: `w${i}`, fields: { role: `r${Date.now()}` } }] };
      const write = await request(base, "POST", `/v0/workspaces/${other.id}/members`, token, body);
      if (write.status === 200) writes.push(write.ms);
      else failures[`POST ${write.status}`] = (failures[`POST ${write.status}`] ?? 0) + 1;
    }
  }
  return { pages: percentiles(pages), writes: percentiles(writes), failures };
}

async function concurrentExports(base: string, big: { id: string; tokens: string[] }, count: number) {
  const runs = Array.from({ length: count }, (_, i) => {
    const accept = i % 2 === 0 ? "text/csv" : "application/x-ndjson";
    const lines = accept === "text/csv" ? MEMBERS + 1 : MEMBERS;
    return exportOnce(
      base,
      `/v0/workspaces/${big.id}/members`,
      big.tokens[i % big.tokens.length] as string,
      accept,
      lines,
    );
  });
  const results = await Promise.all(runs);
  const tally: Record<string, number> = { completed: 0, refused: 0, cut: 0, failed: 0 };
  const statuses: Record<string, number> = {};
  for (const r of results) {
    tally[r.outcome] = (tally[r.outcome] ?? 0) + 1;
    statuses[r.status] = (statuses[r.status] ?? 0) + 1;
  }
  const slowest = Math.round(Math.max(...results.filter((r) => r.outcome === "completed").map((r) => r.ms), 0));
  return { ...tally, statuses, slowestCompletedMs: slowest };
}

/** Exports whose readers take the headers and never read the body; held for `seconds`. */
async function stalledReaders(server: { baseUrl: string; pid: number }, big: { id: string; tokens: string[] }) {
  const count = Number(opts.stalled);
  const rss = () => Math.round(procStatusMb(server.pid, "VmRSS") ?? 0);
  const before = rss();
  const sockets: http.ClientRequest[] = [];
  const statuses: Record<string, number> = {};
  await Promise.all(
    Array.from({ length: count }, (_, i) => {
      const accept = i % 2 === 0 ? "text/csv" : "application/x-ndjson";
      return new Promise<void>((resolve) => {
        const req = http.request(`${server.baseUrl}/v0/workspaces/${big.id}/members`, {
          agent: false,
          headers: { authorization: `Bearer ${big.tokens[i % big.tokens.length]}`, accept },
        });
        sockets.push(req);
        req.on("error", () => resolve());
        req.on("response", (res) => {
          statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
          if (res.statusCode === 200) {
            // Headers read, the body never. (A paused client cannot see the server close the
            // connection: the server's log tells whether it dropped the reader.)
            res.pause();
            res.on("error", () => {});
          } else {
            res.resume();
          }
          resolve();
        });
        req.end();
      });
    }),
  );
  const readyz: Record<string, number> = {};
  let peak = rss();
  const seconds = Number(opts["stall-seconds"]);
  const samples: number[] = [];
  for (let s = 0; s < seconds; s++) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const probe = await request(server.baseUrl, "GET", "/readyz", "").catch(() => ({ status: 0 }));
    readyz[probe.status] = (readyz[probe.status] ?? 0) + 1;
    const now = rss();
    samples.push(now);
    peak = Math.max(peak, now);
  }
  const held = rss();
  // Whether the server has places again: one export read whole, after the stalled readers' time.
  const after = await exportOnce(
    server.baseUrl,
    `/v0/workspaces/${big.id}/members`,
    big.tokens[0] as string,
    "text/csv",
    MEMBERS + 1,
  );
  for (const req of sockets) req.destroy();
  return {
    readers: count,
    statuses,
    rssBeforeMb: before,
    rssPeakMb: peak,
    rssAfter10sMb: samples[9] ?? held,
    rssAtEndMb: held,
    heldSeconds: seconds,
    readyz,
    exportAfterwards: after.outcome === "refused" ? `refused (${after.status})` : after.outcome,
  };
}

async function main() {
  log("building the server (npm run build)");
  await buildService();
  const server = await startServer();
  log(`server ${server.pid} on ${server.baseUrl}`);
  try {
    const big = await workspace(server.baseUrl, "Export load: big", Number(opts.keys));
    const other = await workspace(server.baseUrl, "Export load: other", 1);
    await seed(server.baseUrl, big, MEMBERS);
    await seed(server.baseUrl, other, 1_000);
    log("one export to warm up");
    const warm = await exportOnce(
      server.baseUrl,
      `/v0/workspaces/${big.id}/members`,
      big.tokens[0] as string,
      "text/csv",
      MEMBERS + 1,
    );
    log(`warm-up export: ${warm.outcome} in ${Math.round(warm.ms)} ms`);
    log("another tenant's pages, alone");
    await loopDelay(server.baseUrl);
    const alone = await otherTenant(server.baseUrl, other, Promise.resolve(), 200);
    const aloneLoopDelayMs = await loopDelay(server.baseUrl);
    server.takeMessages();
    log(`${opts.exports} concurrent exports, the other tenant paging meanwhile`);
    const exporting = concurrentExports(server.baseUrl, big, Number(opts.exports));
    const during = await otherTenant(server.baseUrl, other, exporting, 20);
    const exports = await exporting;
    const duringLoopDelayMs = await loopDelay(server.baseUrl);
    const exportLog = server.takeMessages();
    log(`${opts.stalled} stalled readers`);
    const stalled = await stalledReaders(server, big);
    const stalledLog = server.takeMessages();
    process.stdout.write(
      `${JSON.stringify(
        {
          members: MEMBERS,
          warm,
          alone,
          aloneLoopDelayMs,
          exports,
          during,
          duringLoopDelayMs,
          exportLog,
          stalled,
          stalledLog,
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    await server.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  process.exit(1);
});

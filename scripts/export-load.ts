// Exports under load: what 20 concurrent exports and 30 stalled export readers do to a server on
// PostgreSQL, and to another tenant's pages. Starts the built server (as `npm start` does) on a
// database of the caller's, seeds it once (kept for the next run), measures, stops by itself.
//
//   createdb -h 127.0.0.1 -U postgres exportload
//   DATABASE_URL=postgresql://postgres@127.0.0.1:5432/exportload npx tsx scripts/export-load.ts
//
// Options: --members N (300000), --exports N (20), --stalled N (30), --stall-seconds S (40: past EXPORT_WRITE_TIMEOUT_MS, which drops them),
// --keys N (API keys the exports are spread over, 5). Loopback only; every loop is bounded.
// Figures are printed as one JSON document; nothing is asserted.
import http from "node:http";
import { parseArgs } from "node:util";
import { procStatusMb } from "./bench/process-memory.ts";
import { buildService } from "./bench/processes.ts";
import { log, request, seed, startServer, workspace } from "./export-load-setup.ts";

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

// How soon a webhook receiver back from an outage gets the events it missed, against a real
// server process on the production attempt schedule. Loopback only, bounded (about a minute and
// a half; it gives up after 6 minutes). Run: npx tsx scripts/webhook-catch-up.ts [--postgres URL]
// [--down-seconds 38] [--every-ms 2000]. With --postgres it creates a database of its own there
// and drops it afterwards; without, the embedded store in a temporary directory.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";

const { values: args } = parseArgs({
  options: {
    postgres: { type: "string" },
    "down-seconds": { type: "string", default: "38" },
    "every-ms": { type: "string", default: "2000" },
  },
});
const DOWN_MS = Number(args["down-seconds"]) * 1000;
const EVERY_MS = Number(args["every-ms"]);
const GIVE_UP_MS = 6 * 60_000;
const ADMIN = `admin-${randomBytes(12).toString("hex")}`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A receiver that can be stopped (connections refused) and started again on the same port. */
function receiver(port: number) {
  const arrivals: { sequence: number; at: number }[] = [];
  let server: http.Server | undefined;
  return {
    arrivals,
    url: `http://127.0.0.1:${port}/hook`,
    async start() {
      server = http.createServer((req, res) => {
        let body = "";
        req.on("data", (chunk) => (body += chunk));
        req.on("end", () => {
          arrivals.push({ sequence: (JSON.parse(body) as { sequence: number }).sequence, at: Date.now() });
          res.statusCode = 204;
          res.end();
        });
      });
      await new Promise<void>((resolve) => server?.listen(port, "127.0.0.1", resolve));
    },
    async stop() {
      const s = server;
      if (!s) return;
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
      server = undefined;
    },
  };
}

async function call<T>(base: string, token: string, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "catch-up-"));
  let databaseUrl: string | undefined;
  const dbName = `catch_up_${randomBytes(4).toString("hex")}`;
  if (args.postgres) {
    const admin = new pg.Client({ connectionString: args.postgres });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${dbName}`);
    await admin.end();
    const url = new URL(args.postgres);
    url.pathname = `/${dbName}`;
    databaseUrl = url.toString();
  }
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const hook = receiver(await freePort());
  try {
    child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      env: {
        ...process.env,
        PORT: String(port),
        HOST: "127.0.0.1",
        ADMIN_TOKEN: ADMIN,
        DATA_DIR: dataDir,
        WEBHOOK_ALLOW_PRIVATE: "true",
        LOG_LEVEL: "warn",
        ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      },
      stdio: ["ignore", "ignore", "inherit"],
    });
    for (let i = 0; ; i++) {
      if (i > 600) throw new Error("the server did not start within 60 s");
      if (
        await fetch(`${base}/readyz`)
          .then((r) => r.ok)
          .catch(() => false)
      )
        break;
      await sleep(100);
    }
    const workspace = await call<{ id: string }>(base, ADMIN, "POST", "/v0/workspaces", { name: "Catch-up" });
    const { key } = await call<{ key: string }>(base, ADMIN, "POST", `/v0/workspaces/${workspace.id}/api-keys`, {
      name: "catch-up",
    });
    const ws = `/v0/workspaces/${workspace.id}`;
    await hook.start();
    await call(base, key, "POST", `${ws}/webhooks`, { url: hook.url, types: ["audience.created"] });
    let n = 0;
    const event = () => call(base, key, "POST", `${ws}/audiences`, { name: `Event ${n++}` });
    await event();
    while (hook.arrivals.length < 1) await sleep(20);

    await hook.stop();
    const downAt = Date.now();
    let missed = 0;
    while (Date.now() - downAt < DOWN_MS) {
      await event();
      missed++;
      await sleep(Math.min(EVERY_MS, Math.max(0, DOWN_MS - (Date.now() - downAt))));
    }
    await hook.start();
    const backAt = Date.now();
    const expected = 1 + missed;
    while (hook.arrivals.length < expected && Date.now() - backAt < GIVE_UP_MS) await sleep(20);
    const after = hook.arrivals.slice(1);
    const sequences = after.map((a) => a.sequence);
    const inOrder = sequences.every((s, i) => i === 0 || s > (sequences[i - 1] as number));
    const first = after[0] ? (after[0].at - backAt) / 1000 : Number.NaN;
    const last = after.at(-1) ? ((after.at(-1)?.at as number) - backAt) / 1000 : Number.NaN;
    console.log(
      JSON.stringify({
        store: databaseUrl ? "postgresql" : "embedded",
        downSeconds: DOWN_MS / 1000,
        missedEvents: missed,
        received: after.length,
        firstAfterReturnSeconds: Number(first.toFixed(2)),
        lastAfterReturnSeconds: Number(last.toFixed(2)),
        inSequenceOrder: inOrder,
        duplicates: sequences.length - new Set(sequences).size,
        sequences,
      }),
    );
  } finally {
    await hook.stop();
    if (child) {
      const exited = new Promise((resolve) => child?.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    await rm(dataDir, { recursive: true, force: true });
    if (args.postgres) {
      const admin = new pg.Client({ connectionString: args.postgres });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await admin.end();
    }
  }
}

await main();

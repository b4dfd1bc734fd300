// Measures the disk the embedded store takes for a large import, against the same data on
// PostgreSQL: imports N members (default 300,000) through the import endpoint into a new DATA_DIR,
// measures it (du -sb, and its pg_wal) once the job has finished, after a restart, and compares
// with pg_database_size of a database of its own on PostgreSQL.
//
//   npx tsx scripts/data-dir-size.ts [members] [postgresql://postgres@127.0.0.1:5432/postgres]
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

const MEMBERS = Number(process.argv[2] ?? 300_000);
const ADMIN_URL = process.argv[3] ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const MB = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

async function writeCsv(path: string): Promise<void> {
  const out = createWriteStream(path);
  out.write("email,firstName,lastName,company,plan\n");
  for (let i = 1; i <= MEMBERS; i++) {
    const line = `member${i}@example.com,First${i},Last${i},Company ${i % 997},${i % 3 === 0 ? "pro" : "free"}\n`;
    if (!out.write(line)) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
}

interface Server {
  child: ChildProcess;
  address: string;
  output: () => string;
}

async function startServer(env: Record<string, string>): Promise<Server> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    env: { ...process.env, PORT: "0", LOG_LEVEL: "warn", ADMIN_TOKEN: "measure-admin-token", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  for (;;) {
    const address = /listening on (http:\/\/\S+)/.exec(output)?.[1];
    if (address) return { child, address, output: () => output };
    if (child.exitCode !== null) throw new Error(`the server stopped:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function stopServer({ child }: Server): Promise<void> {
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  await exited;
}

/** A workspace and a key made through the admin API. */
async function workspace(address: string) {
  const admin = { authorization: "Bearer measure-admin-token", "content-type": "application/json" };
  const ws = (await (
    await fetch(`${address}/v0/workspaces`, {
      method: "POST",
      headers: admin,
      body: JSON.stringify({ name: "measure" }),
    })
  ).json()) as { id: string };
  const key = (await (
    await fetch(`${address}/v0/workspaces/${ws.id}/api-keys`, { method: "POST", headers: admin, body: "{}" })
  ).json()) as { key: string };
  return { workspaceId: ws.id, apiKey: key.key };
}

async function importMembers(address: string, csv: string): Promise<number> {
  const { workspaceId, apiKey } = await workspace(address);
  const auth = { authorization: `Bearer ${apiKey}` };
  const api = `${address}/v0/workspaces/${workspaceId}`;
  const audience = (await (
    await fetch(`${api}/audiences`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ name: "Everyone imported" }),
    })
  ).json()) as { id: string };
  const started = Date.now();
  const job = (await (
    await fetch(`${api}/imports?audienceId=${audience.id}`, {
      method: "POST",
      headers: { ...auth, "content-type": "text/csv" },
      body: await readFile(csv),
    })
  ).json()) as { id: string };
  for (;;) {
    const state = (await (await fetch(`${api}/imports/${job.id}`, { headers: auth })).json()) as {
      status: string;
      created: number;
    };
    if (state.status !== "queued" && state.status !== "running") {
      if (state.status !== "succeeded" || state.created !== MEMBERS)
        throw new Error(`import: ${JSON.stringify(state)}`);
      return Date.now() - started;
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

const du = (path: string) => Number(execFileSync("du", ["-sb", path], { encoding: "utf8" }).split("\t")[0]);

async function embedded(csv: string) {
  const dataDir = await mkdtemp(join(tmpdir(), "audience-size-"));
  try {
    let server = await startServer({ DATA_DIR: dataDir });
    const ms = await importMembers(server.address, csv);
    const running = { total: du(dataDir), wal: du(join(dataDir, "pglite", "pg_wal")) };
    await stopServer(server);
    const stopped = { total: du(dataDir), wal: du(join(dataDir, "pglite", "pg_wal")) };
    server = await startServer({ DATA_DIR: dataDir });
    const restarted = { total: du(dataDir), wal: du(join(dataDir, "pglite", "pg_wal")) };
    await stopServer(server);
    return { ms, running, stopped, restarted };
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function postgres(csv: string) {
  const name = `audience_size_${process.pid}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  try {
    const server = await startServer({ DATABASE_URL: url.toString() });
    const ms = await importMembers(server.address, csv);
    await stopServer(server);
    const { rows } = await admin.query<{ bytes: string }>("SELECT pg_database_size($1)::text AS bytes", [name]);
    return { ms, bytes: Number(rows[0]?.bytes) };
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

const work = await mkdtemp(join(tmpdir(), "audience-size-csv-"));
try {
  const csv = join(work, "members.csv");
  await writeCsv(csv);
  console.log(`${MEMBERS} members, CSV ${MB(du(csv))}`);
  // Side by side: the embedded import runs in one thread, PostgreSQL's mostly in the server.
  const [onPg, lite] = await Promise.all([postgres(csv), embedded(csv)]);
  console.log(`PostgreSQL: import ${(onPg.ms / 1000).toFixed(0)} s, pg_database_size ${MB(onPg.bytes)}`);
  console.log(`embedded: import ${(lite.ms / 1000).toFixed(0)} s`);
  for (const [when, size] of Object.entries({
    running: lite.running,
    stopped: lite.stopped,
    restarted: lite.restarted,
  })) {
    console.log(
      `  ${when}: DATA_DIR ${MB(size.total)} (pg_wal ${MB(size.wal)}), ${(size.total / onPg.bytes).toFixed(2)}× PostgreSQL`,
    );
  }
} finally {
  await rm(work, { recursive: true, force: true });
}

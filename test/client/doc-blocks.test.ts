import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { test as base } from "../support/fixture.ts";
import { ADMIN_TOKEN, startLiveServer } from "../support/live-server.ts";
import { blockName, DOCUMENTS, documentsWithShellBlocks, parseCurlLog, script, shellBlocks } from "./doc-blocks.ts";
import { REPO_ROOT } from "./sdk-support.ts";

// Every shell block of the README and the guides runs as written, in one bash shell, top to
// bottom (README first, then the guides in DOCUMENTS order), against a live server: the reader's
// `npm start` is this test's server, and what its first start prints (`export WORKSPACE_ID=…`,
// `export API_KEY=…`) and the ADMIN_TOKEN the README starts it with are exported into the shell.
// The blocks say http://127.0.0.1:3000 and a receiver on port 4000; the test puts its server's
// address and a free port in their place, and API_URL (the command line's default address) in
// the environment. A block fenced ```bash no-run is not run; SKIPPED lists each one.
// `curl` is wrapped to log each answer's status by block (its output unchanged): no answer may be
// 5xx, and 4xx only where DOCUMENTED_ERRORS says a block shows one. The webhook receiver of
// docs/webhooks.md stays running in the background, as in a reader's shell; the test then waits
// for the events it verified, and ends the shell's process group.
// It runs in a directory of its own (the blocks write members.csv and other files) that links
// the clone's node_modules and packages, as a fresh clone after `npm install` has them.

/** The blocks shown and not run, by file and first line. */
const SKIPPED = [
  "README.md: npm install && npm start     # serves the API on http://127.0.0.1:3000 with the embedded store",
  "README.md: export ADMIN_TOKEN=$(openssl rand -hex 24)   # keep it; start the server with it",
  "README.md: npm test                     # unit, contract and live-server API tests on the embedded store",
  "docs/sdk.md: npm install @audience-service/client",
  "docs/operations.md: DATABASE_URL=postgresql://user:password@host:5432/audiences npm start",
  "docs/operations.md: systemctl stop audience-service",
  "docs/operations.md: systemctl stop audience-service",
  'docs/operations.md: pg_dump -Fc -d "$DATABASE_URL" -f /backups/audiences-$(date +%F).dump',
  "docs/operations.md: createdb -h db.example.com -U postgres audiences_restored",
  "docs/operations.md: DATABASE_URL=postgresql://app@db-primary:5432/audiences \\",
  "docs/operations.md: MALLOC_ARENA_MAX=1 MALLOC_TRIM_THRESHOLD_=1048576 MALLOC_MMAP_THRESHOLD_=131072 npm start",
  "docs/performance.md: DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres npm run bench   # creates and drops bench_* databases",
];

/**
 * The blocks that show errors on purpose, by name (blockName), and the 4xx statuses their requests
 * get, in order; every other request of every block is answered 2xx or 3xx.
 */
const DOCUMENTED_ERRORS: Record<string, number[][]> = {
  'README.md: curl -s -X POST "$API/audiences" -H "$AUTH" -H "$JSON" -d \'{"name":"weekly DIGEST readers"}\'': [[409]],
  'docs/api.md: curl -s -X PUT "$API/fields/score" -H "$AUTH" -H "$JSON" -d \'{"type":"number"}\'': [[400]],
  "docs/rules.md: # An operator the type lacks: 400 invalid_filter": [[400, 400, 400, 409, 409, 409, 409]],
  // Cancelling the import: 409 import_finished once the job has ended, as it may have by then.
  "docs/imports-exports.md: printf '%s\\n' 'email,firstName,lastName,company,alternativeEmails,plan' \\": [[], [409]],
};

/** The ids the blocks capture, and what each must look like. */
const CAPTURED: Record<string, RegExp> = {
  ...Object.fromEntries(
    ["READERS", "BETA", "ALL", "ENG", "HOT", "RECENT", "Y2024", "VIP", "TECH", "NEW", "NEWS", "CUST", "PROS"]
      .concat(["BOTH", "REACH", "SNAP", "ENGAGED"])
      .map((name) => [name, /^aud_\w+$/]),
  ),
  API_KEY: /^ak_\w+$/,
  TODAY: /^\d{4}-\d\d-\d\d$/,
  CURSOR: /^[\w-]+$/,
  IMPORT: /^imp_\w+$/,
  WEBHOOK: /^whk_\w+$/,
  SECRET: /^whsec_[\w+/=]+$/,
  DELIVERY: /^dlv_\w+$/,
};

const blocks = DOCUMENTS.flatMap(shellBlocks);

/** The API fixture, with a server that delivers webhooks to a receiver on this machine. */
// biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
const it = base.extend("server", { scope: "file" }, async ({}, { onCleanup }) => {
  const server = await startLiveServer({ settings: { webhooks: { allowPrivate: true } } });
  onCleanup(() => server.close());
  return server;
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

describe("the shell blocks of the README and docs/", () => {
  it("are in documents the test knows, and the blocks not run are exactly the listed ones", () => {
    expect(DOCUMENTS).toEqual(expect.arrayContaining(documentsWithShellBlocks()));
    const skipped = blocks.filter((block) => !block.run).map(blockName);
    expect(skipped).toEqual(SKIPPED);
  });

  it("run as written, in one shell, against a live server", async ({ server, ws, onTestFinished }) => {
    const dir = mkdtempSync(join(tmpdir(), "doc-blocks-"));
    symlinkSync(`${REPO_ROOT}node_modules`, join(dir, "node_modules"));
    symlinkSync(`${REPO_ROOT}packages`, join(dir, "packages"));
    const receiverPort = await freePort();
    const rewrite = (text: string) =>
      text
        .replaceAll("http://127.0.0.1:3000", server.baseUrl)
        .replaceAll("127.0.0.1:4000", `127.0.0.1:${receiverPort}`)
        .replaceAll("PORT=4000", `PORT=${receiverPort}`);
    writeFileSync(join(dir, "blocks.sh"), script(blocks, rewrite, Object.keys(CAPTURED)));
    const curlLog = join(dir, "curl.log");
    writeFileSync(curlLog, "");

    // Its own process group, so that what the blocks leave running (the webhook receiver) ends with it.
    const shell = spawn("bash", ["blocks.sh"], {
      cwd: dir,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        WORKSPACE_ID: ws.id,
        API_KEY: ws.key,
        ADMIN_TOKEN,
        API_URL: server.baseUrl,
        CURL_LOG: curlLog,
      },
    });
    onTestFinished(() => {
      try {
        process.kill(-(shell.pid ?? 0), "SIGTERM");
      } catch {
        // Nothing of it is left running.
      }
      rmSync(dir, { recursive: true, force: true });
    });
    let out = "";
    let err = "";
    shell.stdout.on("data", (chunk) => (out += chunk));
    shell.stderr.on("data", (chunk) => (err += chunk));
    const code = await new Promise<number | null>((resolve) => shell.on("exit", resolve));
    expect(code, `${err}\n${out.slice(-3000)}`).toBe(0);

    const captured = Object.fromEntries(
      [...out.matchAll(/^captured (\w+)=(.*)$/gm)].map(([, name = "", value = ""]) => [name, value]),
    );
    for (const [name, shape] of Object.entries(CAPTURED)) expect(captured[name], name).toMatch(shape);

    const calls = parseCurlLog(readFileSync(curlLog, "utf8"));
    // Every document that runs blocks sent requests, and every request was answered.
    expect(new Set(calls.map((call) => call.block.replace(/: .*/, "")))).toEqual(
      new Set([
        "README.md",
        "docs/api.md",
        "docs/rules.md",
        "docs/events.md",
        "docs/webhooks.md",
        "docs/imports-exports.md",
      ]),
    );
    expect(calls.filter((call) => !(call.status >= 200 && call.status < 500))).toEqual([]);
    const errors = (name: string) => calls.filter((c) => c.block === name && c.status >= 400).map((c) => c.status);
    for (const name of new Set(calls.map((call) => call.block)))
      expect(DOCUMENTED_ERRORS[name] ?? [[]], name).toContainEqual(errors(name));
    for (const [name, statuses] of Object.entries(DOCUMENTED_ERRORS))
      expect(statuses, name).toContainEqual(errors(name));

    // The SDK example of docs/sdk.md found the README's audience by its name.
    expect(out).toContain(`audience ${captured.READERS}\n`);
    // The receiver of docs/webhooks.md, left running, verified the test event and the change.
    await expect.poll(() => out, { timeout: 30_000, interval: 100 }).toMatch(/(?:^|\})0 webhook\.test \{/m);
    await expect
      .poll(() => out, { timeout: 30_000, interval: 100 })
      .toMatch(/\d+ audience\.members_changed \{.*"entered":\["mem_1006"\]/);
  });
});

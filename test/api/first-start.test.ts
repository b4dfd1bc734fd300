import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { checkedClient } from "../support/checked-client.ts";

const started: ChildProcess[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const child of started) child.kill("SIGKILL");
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

// What `npm start` serves: its prestart builds dist/main.mjs, its start script runs node on it.
// The build's steps are run as package.json writes them, but for the SDK package's, which the
// run's global setup did before any file started (test/support/client-build.ts): rebuilt here,
// its dist/ would be wiped while the files of other workers import it.
let startArgs: string[];
beforeAll(() => {
  const { scripts } = JSON.parse(readFileSync("package.json", "utf8")) as { scripts: Record<string, string> };
  const steps = (scripts.build ?? "").split("&&").map((step) => step.trim());
  const sdk = steps.filter((step) => step.includes("--workspace @audience-service/client"));
  expect(sdk).toHaveLength(1);
  const buildCommand = steps.filter((step) => !sdk.includes(step)).join(" && ");
  const build = spawnSync("sh", ["-c", buildCommand], {
    encoding: "utf8",
    env: { ...process.env, PATH: `node_modules/.bin:${process.env.PATH}` },
  });
  if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stderr}`);
  const [command, ...args] = (scripts.start ?? "").split(/\s+/);
  expect(command).toBe("node");
  startArgs = args;
}, 60_000);

/** Runs `npm start`'s command as a user would, with this environment, and collects its output. */
function start(env: Record<string, string>) {
  const child = spawn(process.execPath, startArgs, {
    env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "warn", PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  const output = async (pattern: RegExp) => {
    await vi.waitFor(
      () => {
        if (!pattern.test(stdout)) throw new Error(`no ${pattern} in the output yet:\n${stdout}${stderr}`);
      },
      { timeout: 60_000, interval: 100 },
    );
    return stdout;
  };
  return { child, exited, output, stderr: () => stderr };
}

describe("starting the service", () => {
  it("on an empty embedded store prints a workspace and a key that work at once, and only the first time", {
    timeout: 180_000,
  }, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "audience-first-start-"));
    dirs.push(dataDir);
    const first = start({ DATA_DIR: dataDir });
    const stdout = await first.output(/Try:/);
    const address = /listening on (http:\/\/\S+)/.exec(stdout)?.[1];
    const workspaceId = /WORKSPACE_ID=(\S+)/.exec(stdout)?.[1];
    const apiKey = /API_KEY=(\S+)/.exec(stdout)?.[1];
    expect(address).toBeDefined();
    expect(workspaceId).toMatch(/^ws_/);
    expect(apiKey).toMatch(/^ak_/);

    const AUDIENCES = "/v0/workspaces/{workspaceId}/audiences";
    const params = { path: { workspaceId: workspaceId ?? "" } };
    const created = await checkedClient(address ?? "", apiKey).raw.POST(AUDIENCES, {
      params,
      body: { name: "First audience" },
    });
    expect(created.response.status).toBe(201);
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);

    const second = start({ DATA_DIR: dataDir });
    const again = await second.output(/api-keys/);
    expect(again).not.toContain("API_KEY=");
    // A restart names the workspace and says how to make a key, since a lost one is not shown again.
    expect(again).toContain(`  ${workspaceId}  Default workspace`);
    expect(again).toContain("restart with ADMIN_TOKEN set");
    const address2 = /listening on (http:\/\/\S+)/.exec(again)?.[1];
    const list = await checkedClient(address2 ?? "", apiKey).GET(AUDIENCES, { params });
    expect(list.results.map((a) => a.name)).toEqual(["First audience"]);
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
  });

  it("on a restart names the workspaces and prints a command that makes a new key", { timeout: 240_000 }, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "audience-restart-"));
    dirs.push(dataDir);
    const adminToken = "restart-admin-token-0123456789";
    const first = start({ DATA_DIR: dataDir, ADMIN_TOKEN: adminToken });
    const workspaceId = /WORKSPACE_ID=(\S+)/.exec(await first.output(/Try:/))?.[1] ?? "";
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);

    const second = start({ DATA_DIR: dataDir, ADMIN_TOKEN: adminToken });
    const stdout = await second.output(/api-keys/);
    expect(stdout).toContain(`Workspaces:\n  ${workspaceId}  Default workspace\n`);
    // The printed command, run as printed (curl's -X, -H and URL), makes a key that works.
    const curl = /curl -s -X (POST) -H "Authorization: Bearer \$ADMIN_TOKEN" (\S+)/.exec(stdout);
    expect(curl?.[2]).toMatch(new RegExp(`/v0/workspaces/${workspaceId}/api-keys$`));
    const made = await fetch(curl?.[2] ?? "", {
      method: curl?.[1],
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(made.status).toBe(201);
    const { key } = (await made.json()) as { key: string };
    const address = /listening on (http:\/\/\S+)/.exec(stdout)?.[1] ?? "";
    const audiences = await fetch(`${address}/v0/workspaces/${workspaceId}/audiences`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(audiences.status).toBe(200);

    // With many workspaces, the first few and the count.
    for (let i = 0; i < 6; i++) {
      const created = await fetch(`${address}/v0/workspaces`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
        body: JSON.stringify({ name: `Team ${i}` }),
      });
      expect(created.status).toBe(201);
    }
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    const third = start({ DATA_DIR: dataDir, ADMIN_TOKEN: adminToken });
    const many = await third.output(/api-keys/);
    expect(many).toContain(`Workspaces (the first 5 of 7):\n  ${workspaceId}  Default workspace\n`);
    expect(many.match(/^ {2}ws_\S+ {2}/gm)).toHaveLength(5);
    expect(many).toContain("/v0/workspaces/<workspace id>/api-keys");
    third.child.kill("SIGTERM");
    expect(await third.exited).toBe(0);
  });

  it.each([
    ["PORT", "http"],
    ["DATABASE_URL", "mysql://localhost/db"],
    ["LOG_LEVEL", "loud"],
    ["ADMIN_TOKEN", "short"],
  ])("refuses an invalid %s with a clear message and a non-zero exit", async (name, value) => {
    const run = start({ [name]: value, DATA_DIR: join(tmpdir(), "never-used") });
    expect(await run.exited).not.toBe(0);
    expect(run.stderr()).toContain(`Invalid configuration: ${name}`);
  });
});

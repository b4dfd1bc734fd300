import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { procStatusMb, type StartMemory, startMemory, watchStart } from "./process-memory.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

interface Spawned {
  pid: number;
  /** The last lines the process wrote, for error messages. */
  tail(): string;
  /** Resolves with the first stdout line matching the pattern. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray>;
  /** SIGTERM, then SIGKILL after graceMs; resolves when the process has exited. */
  stop(graceMs?: number): Promise<void>;
}

/** Starts node with these arguments in the repository, tracking its output line by line. */
function spawnNode(nodeArgs: string[], env: NodeJS.ProcessEnv): Spawned {
  const child = spawn(process.execPath, nodeArgs, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  if (child.pid === undefined) throw new Error(`could not start node ${nodeArgs.join(" ")}`);
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (m: RegExpExecArray) => void }[] = [];
  let exited = false;
  let buffered = "";
  const onLine = (line: string) => {
    lines.push(line);
    if (lines.length > 200) lines.shift();
    for (const waiter of [...waiters]) {
      const match = waiter.pattern.exec(line);
      if (match) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(match);
      }
    }
  };
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk;
    const parts = buffered.split("\n");
    buffered = parts.pop() ?? "";
    for (const part of parts) onLine(part);
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    for (const part of chunk.split("\n")) if (part) onLine(`[stderr] ${part}`);
  });
  const exit = new Promise<void>((resolve) =>
    child.on("exit", () => {
      exited = true;
      resolve();
    }),
  );
  const tail = () => lines.slice(-30).join("\n");
  return {
    pid: child.pid,
    tail,
    waitFor(pattern, timeoutMs) {
      for (const line of lines) {
        const match = pattern.exec(line);
        if (match) return Promise.resolve(match);
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms; output:\n${tail()}`));
        }, timeoutMs);
        const waiter = {
          pattern,
          resolve: (m: RegExpExecArray) => {
            clearTimeout(timer);
            resolve(m);
          },
        };
        waiters.push(waiter);
        void exit.then(() => {
          clearTimeout(timer);
          if (waiters.includes(waiter)) reject(new Error(`process exited (${child.exitCode}); output:\n${tail()}`));
        });
      });
    },
    async stop(graceMs = 15_000) {
      if (exited) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exit;
      clearTimeout(timer);
    },
  };
}

/**
 * The environment for a child: this process's, minus what it must not inherit (the store, the
 * address to listen on, NODE_OPTIONS).
 */
function childEnv(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of [
    "DATABASE_URL",
    "DATABASE_READ_URLS",
    "DATA_DIR",
    "TEST_DATABASE_URL",
    "PORT",
    "HOST",
    "NODE_OPTIONS",
  ])
    delete env[key];
  for (const [key, value] of Object.entries(extra)) if (value !== undefined) env[key] = value;
  return env;
}

interface ServiceSettings {
  databaseUrl?: string | undefined;
  /** DATABASE_READ_URLS: replicas to read from. */
  readUrls?: string | undefined;
  /** DATABASE_REPLICA_WAIT_MS, when not the default. */
  replicaWaitMs?: number | undefined;
  dataDir?: string | undefined;
  adminToken: string;
  rateLimitPerMinute: number;
  bodyLimit: number;
  cpuProfDir?: string | undefined;
}

export interface ServiceProcess extends Spawned {
  baseUrl: string;
  /** From the first-start banner; absent when the store already held a workspace. */
  workspaceId?: string | undefined;
  apiKey?: string | undefined;
  start: StartMemory;
  /** Its VmHWM: read now while it runs, the last value read (at stop) once it has exited. */
  peakRssMb(): number;
}

/**
 * The node arguments of `npm start` (package.json: "node <flags> dist/main.mjs"), so that the
 * benchmark runs the server exactly as users do, in a process whose memory it can read.
 */
function startArguments(): string[] {
  const scripts = JSON.parse(readFileSync(`${ROOT}package.json`, "utf8")).scripts as Record<string, string>;
  const [command, ...args] = (scripts.start ?? "").split(/\s+/);
  if (command !== "node") throw new Error(`npm start is not "node …": ${scripts.start}`);
  return args;
}

const BARE_SERVER = "dist/bench/bare-server.mjs";

/**
 * Builds the server as `npm start` does (prestart: npm run build), and the bare server the same
 * way, so that neither process carries a TypeScript loader.
 */
export async function buildService(): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn("npm", ["run", "build"], { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] });
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`npm run build exited with ${code}`))));
  });
  await build({
    absWorkingDir: ROOT,
    entryPoints: ["scripts/bench/bare-server.ts"],
    bundle: true,
    platform: "node",
    format: "esm",
    packages: "external",
    logLevel: "warning",
    outfile: BARE_SERVER,
  });
}

/**
 * glibc's allocator settings of the systemd unit (docs/operations.md,
 * "Memory"): read by glibc when the process starts, so set in its environment, which `npm start`
 * cannot do on every platform. One arena: what V8's compiling thread frees is reused by the main
 * thread instead of kept in an arena of its own; large blocks and the heap's free top go back.
 */
export const SERVER_MALLOC_ENV = {
  MALLOC_ARENA_MAX: "1",
  MALLOC_TRIM_THRESHOLD_: "1048576",
  MALLOC_MMAP_THRESHOLD_: "131072",
} as const;

/**
 * Starts the built service as `npm start` does, in the environment a deployment gives it (glibc's
 * settings above, which the embedded run's description names), and waits until it listens.
 */
export async function startService(settings: ServiceSettings): Promise<ServiceProcess> {
  const profile = settings.cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${settings.cpuProfDir}`] : [];
  const spawned = spawnNode(
    [...profile, ...startArguments()],
    childEnv({
      ...SERVER_MALLOC_ENV,
      PORT: "0",
      HOST: "127.0.0.1",
      DATABASE_URL: settings.databaseUrl,
      DATABASE_READ_URLS: settings.readUrls,
      DATABASE_REPLICA_WAIT_MS: settings.replicaWaitMs === undefined ? undefined : String(settings.replicaWaitMs),
      DATA_DIR: settings.dataDir,
      ADMIN_TOKEN: settings.adminToken,
      LOG_LEVEL: "warn",
      BODY_LIMIT: String(settings.bodyLimit),
      RATE_LIMIT_PER_MINUTE: String(settings.rateLimitPerMinute),
      // The webhook scenarios' receivers listen on this machine.
      WEBHOOK_ALLOW_PRIVATE: "true",
      // The bench measures what rules cost to follow: its rule of five conditions over 1,000,000
      // members is above the embedded store's default budget, which guards a deployment's other
      // requests from one long statement (rules.md "What a filter may cost").
      FILTER_COST_BUDGET: "0",
    }),
  );
  const watched = watchStart(spawned.pid);
  try {
    // The embedded store's first start creates its schema: on a shared, loaded machine, minutes.
    const [, baseUrl] = await spawned.waitFor(/listening on (http:\/\/\S+)/, 300_000);
    // On a fresh store the banner follows the listening line at once.
    const workspace = await spawned.waitFor(/export WORKSPACE_ID=(\S+)/, 2_000).catch(() => undefined);
    const key = workspace ? await spawned.waitFor(/export API_KEY=(\S+)/, 2_000).catch(() => undefined) : undefined;
    const start = await startMemory(spawned.pid, watched);
    let peak = start.peakMb;
    const peakRssMb = () => {
      peak = Math.max(peak, procStatusMb(spawned.pid, "VmHWM") ?? 0);
      return peak;
    };
    const stop = async (graceMs?: number) => {
      peakRssMb();
      await spawned.stop(graceMs);
    };
    return {
      ...spawned,
      stop,
      baseUrl: baseUrl as string,
      workspaceId: workspace?.[1],
      apiKey: key?.[1],
      start,
      peakRssMb,
    };
  } catch (error) {
    watched.stop();
    await spawned.stop(2_000);
    throw error;
  }
}

/** The bare Fastify route the HTTP throughput is compared with, in its own process. */
export async function startBareServer(
  env: Record<string, string | undefined>,
): Promise<Spawned & { url: string; sqlUrl?: string | undefined }> {
  const spawned = spawnNode([BARE_SERVER], childEnv(env));
  try {
    const [, url, sql] = await spawned.waitFor(/bare route at (http:\/\/\S+)( and \S+)?/, 60_000);
    const base = (url as string).replace(/\/bare\/audience$/, "");
    return { ...spawned, url: url as string, sqlUrl: sql ? `${base}/bare/audience-sql` : undefined };
  } catch (error) {
    await spawned.stop(2_000);
    throw error;
  }
}

export interface LoadResult {
  requestsPerSec: number;
  total: number;
  non2xx: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
}

const autocannonBin = createRequire(import.meta.url).resolve("autocannon/autocannon.js");

/** Runs autocannon in its own process against a loopback URL and returns its summary. */
export async function autocannon(
  url: string,
  { connections, seconds, headers = {} }: { connections: number; seconds: number; headers?: Record<string, string> },
): Promise<LoadResult> {
  if (new URL(url).hostname !== "127.0.0.1") throw new Error(`the benchmark only targets 127.0.0.1: ${url}`);
  const args = [autocannonBin, "-c", String(connections), "-d", String(seconds), "--json", "-n"];
  for (const [name, value] of Object.entries(headers)) args.push("-H", `${name}=${value}`);
  args.push(url);
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: childEnv({}) });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    err += chunk;
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), (seconds + 60) * 1_000);
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  clearTimeout(timer);
  const json = out.slice(out.indexOf("{"));
  if (code !== 0 || !json) throw new Error(`autocannon failed (exit ${code}): ${err.slice(-1_000)}`);
  const result = JSON.parse(json) as {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number };
    non2xx: number;
    errors: number;
    timeouts: number;
  };
  return {
    requestsPerSec: result.requests.average,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
  };
}

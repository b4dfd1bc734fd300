import { performance } from "node:perf_hooks";
import pg from "pg";
import { fold } from "../../../src/features/membership/rules/filter.ts";
import type { Client } from "../http.ts";
import { cpuSeconds } from "../process-memory.ts";
import { type RawDb, rawSql } from "../raw.ts";
import { summarize } from "../stats.ts";
import { range } from "./member-ids.ts";
import { thousands } from "./result-rows.ts";
import { type Context, measure, type StartSecondProcess } from "./scenario-context.ts";

const WORKSPACES = 50;
const CLIENTS = 20;
const MEMBERS_EACH = 2_000;
const ADD = 10;

interface Tenant {
  workspaceId: string;
  audienceId: string;
  apiKey: string;
  api: Client;
}

interface LoadResult {
  requests: number;
  errors: number;
  ms: number[];
  seconds: number;
}

/** CLIENTS loops for `seconds`: each step a page read (80%) or an add of ADD new ids (20%). */
async function drive(
  seconds: number,
  step: (read: boolean, client: number, n: number) => Promise<boolean>,
): Promise<LoadResult> {
  const end = performance.now() + seconds * 1_000;
  const ms: number[] = [];
  let errors = 0;
  const started = performance.now();
  await Promise.all(
    range(0, CLIENTS, async (client) => {
      for (let n = 0; performance.now() < end; n++) {
        const t = performance.now();
        // A fixed pattern per client, so both runs do the same mix: 4 reads, then an add.
        const ok = await step(n % 5 !== 4, client, n).catch(() => false);
        ms.push(performance.now() - t);
        if (!ok) errors++;
      }
    }),
  );
  return { requests: ms.length, errors, ms, seconds: (performance.now() - started) / 1_000 };
}

/** A pool as large as the service's write pool, to send the raw statements concurrently too. */
function rawPool(ctx: Context): { db: RawDb; close: () => Promise<void> } {
  if (!ctx.rawDatabaseUrl) return { db: ctx.raw, close: async () => {} };
  const pool = new pg.Pool({ connectionString: ctx.rawDatabaseUrl, max: 10, options: "-c jit=off" });
  pool.on("error", () => {});
  // Queries go through the pool; anything else as on the run's raw connection.
  const db: RawDb = { ...ctx.raw, query: async (sql, params) => (await pool.query(sql, params)).rows };
  return { db, close: () => pool.end() };
}

/**
 * Scenario: 50 workspaces of 2,000 members, 20 concurrent clients for the load duration (30 s at
 * full size), 80% first pages of 100 members and 20% adds of 10 new ids, beside the same mix sent
 * as the raw statements (a keyset page, one insert-and-include) over a pool of the same size.
 * On PostgreSQL, the same load again on two server processes behind the same database (half the
 * clients on each), reported beside the same raw figure.
 */
export async function mixedLoad(ctx: Context, startSecondProcess: StartSecondProcess | undefined): Promise<void> {
  const seconds = ctx.opts.quick ? 2 : 30;
  ctx.log(`mixed load: ${WORKSPACES} workspaces of ${thousands(MEMBERS_EACH)} members`);
  const tenants: Tenant[] = [];
  for (let w = 0; w < WORKSPACES; w++) {
    const { body: workspace } = await ctx.admin.call<{ id: string }>(
      "POST",
      "/v0/workspaces",
      { name: `Mixed ${w}` },
      201,
    );
    const { body: key } = await ctx.admin.call<{ key: string }>(
      "POST",
      `/v0/workspaces/${workspace.id}/api-keys`,
      { name: "mixed" },
      201,
    );
    const api = ctx.clientFor(key.key);
    const { body: audience } = await api.call<{ id: string }>(
      "POST",
      `/v0/workspaces/${workspace.id}/audiences`,
      { name: "Readers" },
      201,
    );
    const ids = range(0, MEMBERS_EACH, (n) => `w${w}m${n}`);
    await api.call("POST", `/v0/workspaces/${workspace.id}/audiences/${audience.id}/members`, { memberIds: ids }, 200);
    await rawSql.workspace(ctx.raw, workspace.id);
    await rawSql.audience(ctx.raw, workspace.id, audience.id, "Readers");
    await rawSql.addNewMembers(ctx.raw, workspace.id, audience.id, ids, ids.map(fold));
    tenants.push({ workspaceId: workspace.id, audienceId: audience.id, apiKey: key.key, api });
  }
  await ctx.analyze();
  const tenantOf = (client: number, n: number) => tenants[(client * 7 + n) % WORKSPACES] as Tenant;
  const newIds = (tag: string, client: number, n: number) => range(0, ADD, (i) => `${tag}-c${client}-n${n}-${i}`);

  ctx.log(`mixed load: ${seconds} s of raw statements, then ${seconds} s through the API, ${CLIENTS} clients`);
  const raw = rawPool(ctx);
  const rawRun = await drive(seconds, async (read, client, n) => {
    const t = tenantOf(client, n);
    if (read) return (await rawSql.page(raw.db, t.workspaceId, t.audienceId, null, 100)).length === 100;
    const ids = newIds("raw", client, n);
    await rawSql.addNewMembers(raw.db, t.workspaceId, t.audienceId, ids, ids.map(fold));
    return true;
  });
  await raw.close();
  const done = measure(ctx);
  const serviceRun = await drive(seconds, (read, client, n) => {
    const t = tenantOf(client, n);
    return serviceStep(t.api, t, read, newIds("api", client, n));
  });
  const label = `${WORKSPACES} workspaces, ${CLIENTS} clients, 80% pages / 20% adds of ${ADD}: req/s`;
  const baselineLabel = `the same statements sent raw, p50 ${summarize(rawRun.ms).median.toFixed(1)} ms`;
  const service = summarize(serviceRun.ms);
  ctx.rows.push({
    metric: "mixed_load",
    label: `mixed load, ${label} (p50 ${service.median.toFixed(1)} ms, ${serviceRun.errors} errors)`,
    unit: "req/s",
    value: rate(serviceRun),
    baseline: rate(rawRun),
    baselineLabel,
    ratio: rate(serviceRun) / rate(rawRun),
    target: "mixed_load",
    errors: serviceRun.errors,
    medianMs: service.median,
    p99Ms: service.p99,
    throughput: rate(serviceRun),
    ...done(),
  });
  if (!startSecondProcess) return;

  // The same load on two server processes behind the same database, half the clients on each.
  ctx.log(`mixed load: ${seconds} s through the API on two server processes, ${CLIENTS / 2} clients each`);
  const second = await startSecondProcess();
  try {
    const apis = new Map(tenants.map((t) => [t.workspaceId, second.clientFor(t.apiKey)]));
    const bothDone = measure(ctx);
    const secondCpu = cpuSeconds(second.service.pid) ?? 0;
    const twoRun = await drive(seconds, (read, client, n) => {
      const t = tenantOf(client, n);
      const api = client % 2 === 0 ? t.api : (apis.get(t.workspaceId) as Client);
      return serviceStep(api, t, read, newIds("two", client, n));
    });
    const both = summarize(twoRun.ms);
    const measured = bothDone();
    ctx.rows.push({
      metric: "mixed_load_two_processes",
      label: `mixed load on two server processes, ${label} (p50 ${both.median.toFixed(1)} ms, ${twoRun.errors} errors)`,
      unit: "req/s",
      value: rate(twoRun),
      baseline: rate(rawRun),
      baselineLabel,
      ratio: rate(twoRun) / rate(rawRun),
      errors: twoRun.errors,
      medianMs: both.median,
      p99Ms: both.p99,
      throughput: rate(twoRun),
      ...measured,
      // Both processes' CPU time (the RSS column stays the first process's).
      serverCpuS: (measured.serverCpuS ?? 0) + ((cpuSeconds(second.service.pid) ?? secondCpu) - secondCpu),
    });
  } finally {
    await second.stop();
  }
}

const rate = (r: LoadResult) => r.requests / r.seconds;

/** One step of a client through the API; call() throws on any other status: counted as an error. */
async function serviceStep(api: Client, t: Tenant, read: boolean, ids: string[]): Promise<boolean> {
  const path = `/v0/workspaces/${t.workspaceId}/audiences/${t.audienceId}/members`;
  if (read) await api.call("GET", `${path}?limit=100`, undefined, 200);
  else await api.call("POST", path, { memberIds: ids }, 200);
  return true;
}

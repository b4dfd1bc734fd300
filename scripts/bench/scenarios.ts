// The scenarios. Each runs its raw baseline in the same run, interleaved with the service (a raw
// batch, then the service's request for the same batch; a raw page read, then the service's), so
// that on a shared machine both see the same background load.
import { encodeCursor } from "../../src/domain/cursor.ts";
import { fold, foldMember } from "../../src/domain/filter.ts";
import { type Client, createClient } from "./http.ts";
import type { BenchOptions } from "./options.ts";
import {
  autocannon,
  cpuSeconds,
  type LoadResult,
  procStatusMb,
  type RssSampler,
  type ServiceProcess,
  startBareServer,
} from "./processes.ts";
import { type MemberWithData, type RawDb, rawSql, timed } from "./raw.ts";
import type { ResultRow } from "./report.ts";
import { summarize } from "./stats.ts";

export interface Context {
  opts: BenchOptions;
  service: ServiceProcess;
  rss: RssSampler;
  /** The workspace of the first-start banner, and a client with its key. */
  workspaceId: string;
  apiKey: string;
  api: Client;
  admin: Client;
  raw: RawDb;
  /** PostgreSQL: the raw baseline's database, for the bare route's SQL query. */
  rawDatabaseUrl?: string | undefined;
  rows: ResultRow[];
  deadline: number;
  log(message: string): void;
  /** PostgreSQL: ANALYZE both databases, as autovacuum would shortly after a bulk load. */
  analyze(): Promise<void>;
}

/** What later scenarios build on: the big audience, and what the bare routes measured. */
export interface State {
  everyone?: string;
  bareRps?: number;
  bareRssMb?: number;
}

const ws = (ctx: Context, workspaceId = ctx.workspaceId) => `/v0/workspaces/${workspaceId}`;
const pad = (n: number) => String(n).padStart(7, "0");
/** Member ids of the big audience: m0000000, m0000001, … (lexical order is numeric order). */
const bigId = (n: number) => `m${pad(n)}`;
const range = (from: number, to: number, id: (n: number) => string) =>
  Array.from({ length: Math.max(0, to - from) }, (_, i) => id(from + i));
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const thousands = (n: number) => n.toLocaleString("en-US");

function checkTime(ctx: Context): void {
  if (Date.now() > ctx.deadline) throw new Error(`gave up: the run exceeded --max-minutes=${ctx.opts.maxMinutes}`);
}

/** The server's CPU seconds and peak RSS over one scenario, and the scenario's wall time. */
function measure(ctx: Context) {
  ctx.rss.nextWindow();
  const cpu = cpuSeconds(ctx.service.pid) ?? 0;
  const started = Date.now();
  return () => ({
    serverPeakRssMb: ctx.rss.nextWindow(),
    serverCpuS: (cpuSeconds(ctx.service.pid) ?? cpu) - cpu,
    wallS: (Date.now() - started) / 1_000,
  });
}

async function createAudience(ctx: Context, name: string, workspaceId = ctx.workspaceId, api = ctx.api) {
  const { body } = await api.call<{ id: string }>("POST", `${ws(ctx, workspaceId)}/audiences`, { name }, 201);
  await rawSql.audience(ctx.raw, workspaceId, body.id, name);
  return body.id;
}

/** A write-rate row: rows per second of the service's requests against the raw statements'. */
function rateRow(
  rows: number,
  serviceMs: number[],
  rawMs: number[],
  row: Pick<ResultRow, "scenario" | "label" | "baselineLabel" | "target"> & { minRatio?: number },
): ResultRow {
  const rate = rows / (sum(serviceMs) / 1_000);
  const rawRate = rows / (sum(rawMs) / 1_000);
  const perRequest = summarize(serviceMs);
  const perStatement = summarize(rawMs);
  const { minRatio, ...rest } = row;
  return {
    ...rest,
    unit: "rows/s",
    value: rate,
    baseline: rawRate,
    ratio: rate / rawRate,
    pass: minRatio === undefined ? null : rate / rawRate >= minRatio,
    throughput: rate,
    medianMs: perRequest.median,
    p99Ms: perRequest.p99,
    baselineMedianMs: perStatement.median,
    baselineP99Ms: perStatement.p99,
  };
}

/** Scenario: 1,000,000 new members into one audience, by id, `batch` per request. */
export async function bulkAddNew(ctx: Context, state: State): Promise<void> {
  const { size, batch } = ctx.opts;
  const audienceId = await createAudience(ctx, "Bench: everyone");
  state.everyone = audienceId;
  const batches = size / batch;
  ctx.log(`bulk add: ${batches} × (raw unnest insert, POST …/members) of ${batch} new ids`);
  const rawMs: number[] = [];
  const serviceMs: number[] = [];
  const done = measure(ctx);
  for (let b = 0; b < batches; b++) {
    checkTime(ctx);
    const ids = range(b * batch, (b + 1) * batch, bigId);
    const folded = ids.map(fold);
    rawMs.push(await timed(() => rawSql.addNewMembers(ctx.raw, ctx.workspaceId, audienceId, ids, folded)));
    const res = await ctx.api.call<{ added: number; created: number }>(
      "POST",
      `${ws(ctx)}/audiences/${audienceId}/members`,
      { memberIds: ids },
      200,
    );
    if (res.body.added !== batch || res.body.created !== batch) {
      throw new Error(`bulk add: expected ${batch} added and created, got ${JSON.stringify(res.body)}`);
    }
    serviceMs.push(res.ms);
  }
  ctx.rows.push({
    ...rateRow(size, serviceMs, rawMs, {
      scenario: "bulk_add_new_ids",
      label: `bulk add ${thousands(size)} new ids (${thousands(batch)}/request)`,
      baselineLabel: "unnest INSERT",
      target: "≥ 0.50× raw",
      minRatio: 0.5,
    }),
    ...done(),
  });
}

/** The member at `depth` of the big audience, newest first, from bulkAddNew's batch layout. */
function bigIdAtDepth(opts: BenchOptions, depth: number): string {
  const batches = opts.size / opts.batch;
  const batchIndex = batches - 1 - Math.floor(depth / opts.batch);
  return bigId(batchIndex * opts.batch + (opts.batch - 1 - (depth % opts.batch)));
}

/** Scenario: a page of 100 members at depth 0, 50% and 99% of the big audience, with totalCount. */
export async function pages(ctx: Context, state: State): Promise<void> {
  const audienceId = state.everyone;
  if (!audienceId) throw new Error("pages need the audience of the bulk add");
  const { size, pageWarmup, pageSamples } = ctx.opts;
  if (ctx.rawDatabaseUrl) await pageBeforeAnalyze(ctx, audienceId);
  await ctx.analyze();
  const depths = [0, Math.round(size * 0.5), Math.round(size * 0.99)];
  const medians: { service: number; raw: number }[] = [];
  for (const depth of depths) {
    const depthLabel = depth >= 1_000 ? `${Math.round(depth / 1_000)}k` : String(depth);
    ctx.log(`page at depth ${depthLabel}: ${pageSamples} × (raw keyset query, GET …/members?limit=100)`);
    const position = depth === 0 ? null : await rawSql.positionBefore(ctx.raw, ctx.workspaceId, audienceId, depth);
    let path = `${ws(ctx)}/audiences/${audienceId}/members?limit=100`;
    if (depth > 0) {
      // The cursor of the row just before the page, encoded as the service encodes it.
      const id = bigIdAtDepth(ctx.opts, depth - 1);
      const member = await ctx.api.call<{ createdAt: string }>("GET", `${ws(ctx)}/members/${id}`, undefined, 200);
      path += `&after=${encodeCursor(audienceId, { createdAt: new Date(member.body.createdAt), id })}`;
    }
    const rawMs: number[] = [];
    const serviceMs: number[] = [];
    const done = measure(ctx);
    for (let i = 0; i < pageWarmup + pageSamples; i++) {
      checkTime(ctx);
      let rows = 0;
      const ms = await timed(async () => {
        rows = (await rawSql.page(ctx.raw, ctx.workspaceId, audienceId, position, 100)).length;
      });
      if (rows !== 100) throw new Error(`raw page at depth ${depth}: ${rows} rows`);
      const res = await ctx.api.call<{ totalCount: number; results: { id: string }[] }>("GET", path, undefined, 200);
      if (i === 0) {
        const expected = bigIdAtDepth(ctx.opts, depth);
        const { totalCount, results } = res.body;
        if (results.length !== 100 || results[0]?.id !== expected || totalCount !== size) {
          throw new Error(
            `page at depth ${depth}: expected 100 rows from ${expected} of ${size}, got ${results.length} from ${results[0]?.id} of ${totalCount}`,
          );
        }
      }
      if (i >= pageWarmup) {
        rawMs.push(ms);
        serviceMs.push(res.ms);
      }
    }
    const used = done();
    const service = summarize(serviceMs);
    const raw = summarize(rawMs);
    medians.push({ service: service.median, raw: raw.median });
    ctx.rows.push({
      scenario: `page_depth_${depthLabel}`,
      label: `page of 100 at depth ${depthLabel}: p50 (p99 ${service.p99.toFixed(1)} ms)`,
      unit: "ms",
      value: service.median,
      baseline: raw.median,
      baselineLabel: `keyset SQL p50; p99 ${raw.p99.toFixed(1)} ms`,
      ratio: service.median / raw.median,
      target: "p50 ≤ 5 ms, p99 ≤ 20 ms",
      pass: service.median <= 5 && service.p99 <= 20,
      medianMs: service.median,
      p99Ms: service.p99,
      baselineMedianMs: raw.median,
      baselineP99Ms: raw.p99,
      ...used,
    });
  }
  const first = medians[0] as { service: number; raw: number };
  const deepest = Math.max(...medians.slice(1).map((m) => m.service));
  const deepestRaw = Math.max(...medians.slice(1).map((m) => m.raw));
  ctx.rows.push({
    scenario: "page_deep_vs_first",
    label: "slowest deep page p50 / first page p50",
    unit: "×",
    value: deepest / first.service,
    baseline: deepestRaw / first.raw,
    baselineLabel: "same ratio, raw",
    ratio: null,
    target: "≤ 1.5×",
    pass: deepest / first.service <= 1.5,
  });
}

/**
 * PostgreSQL: the first page straight after the bulk load, before the tables have statistics (a
 * server with autovacuum off never gets them; with it on, until it runs). A few samples only,
 * bounded in time: a plan chosen without statistics can read the whole audience.
 */
async function pageBeforeAnalyze(ctx: Context, audienceId: string): Promise<void> {
  const path = `${ws(ctx)}/audiences/${audienceId}/members?limit=100`;
  const rawMs: number[] = [];
  const serviceMs: number[] = [];
  const until = Date.now() + 60_000;
  ctx.log("page at depth 0 before ANALYZE: up to 3 × (raw keyset query, GET …/members?limit=100)");
  const done = measure(ctx);
  for (let i = 0; i < 3 && Date.now() < until; i++) {
    rawMs.push(await timed(() => rawSql.page(ctx.raw, ctx.workspaceId, audienceId, null, 100)));
    serviceMs.push((await ctx.api.call("GET", path, undefined, 200)).ms);
  }
  const service = summarize(serviceMs);
  const raw = summarize(rawMs);
  ctx.rows.push({
    scenario: "page_depth_0_before_analyze",
    label: `page of 100 at depth 0 before ANALYZE: p50 of ${service.count}`,
    unit: "ms",
    value: service.median,
    baseline: raw.median,
    baselineLabel: "keyset SQL p50, same stale statistics",
    ratio: service.median / raw.median,
    target: "(info)",
    pass: null,
    medianMs: service.median,
    p99Ms: service.max,
    baselineMedianMs: raw.median,
    baselineP99Ms: raw.max,
    ...done(),
  });
}

/**
 * Scenario: GET …/audiences/:id under load (autocannon, its own process), against a bare Fastify
 * route in another process, and that route plus the one SQL query getAudience needs. The three
 * are measured in turn, `rounds` times; each figure is its best round.
 */
export async function getThroughput(ctx: Context, state: State): Promise<void> {
  const audienceId = state.everyone;
  if (!audienceId) throw new Error("the throughput run needs the audience of the bulk add");
  const { connections, loadSeconds, loadWarmup } = ctx.opts;
  const rounds = ctx.opts.quick ? 1 : 2;
  // Two processes: the bare route alone (also the RSS baseline), and the route with its database.
  const bare = await startBareServer({ BARE_AUDIENCE_ID: audienceId });
  const bareSql = await startBareServer({
    BARE_WORKSPACE_ID: ctx.workspaceId,
    BARE_AUDIENCE_ID: audienceId,
    ...(ctx.rawDatabaseUrl ? { BARE_DATABASE_URL: ctx.rawDatabaseUrl } : { BARE_PGLITE: "1" }),
  }).catch(async (error: unknown) => {
    await bare.stop();
    throw error;
  });
  const serviceUrl = `${ctx.service.baseUrl}${ws(ctx)}/audiences/${audienceId}`;
  const headers = { authorization: `Bearer ${ctx.apiKey}` };
  const best = new Map<string, LoadResult>();
  const run = async (name: string, url: string, extra: Record<string, string> = {}) => {
    await autocannon(url, { connections, seconds: loadWarmup, headers: extra });
    const result = await autocannon(url, { connections, seconds: loadSeconds, headers: extra });
    if (result.non2xx > 0 || result.errors > 0) {
      throw new Error(`${url}: ${result.non2xx} non-2xx answers and ${result.errors} errors of ${result.total}`);
    }
    if ((best.get(name)?.requestsPerSec ?? -1) < result.requestsPerSec) best.set(name, result);
  };
  let serviceUsage: ReturnType<ReturnType<typeof measure>> | undefined;
  try {
    for (let round = 1; round <= rounds; round++) {
      checkTime(ctx);
      ctx.log(`HTTP throughput round ${round}/${rounds}: bare route, bare route + SQL, GET …/audiences/:id`);
      await run("bare", bare.url);
      if (bareSql.sqlUrl) await run("bareSql", bareSql.sqlUrl);
      const done = measure(ctx);
      await run("service", serviceUrl, headers);
      const used = done();
      serviceUsage = { ...used, serverPeakRssMb: Math.max(used.serverPeakRssMb, serviceUsage?.serverPeakRssMb ?? 0) };
    }
    state.bareRssMb = procStatusMb(bare.pid, "VmHWM") ?? undefined;
  } finally {
    await Promise.all([bare.stop(), bareSql.stop()]);
  }
  const bareResult = best.get("bare") as LoadResult;
  const service = best.get("service") as LoadResult;
  state.bareRps = bareResult.requestsPerSec;
  ctx.rows.push({
    ...getRow(service, bareResult.requestsPerSec),
    scenario: "get_audience_throughput",
    label: `GET …/audiences/:id throughput (best of ${rounds})`,
    ...serviceUsage,
  });
  const sql = best.get("bareSql");
  if (sql) {
    ctx.rows.push({
      scenario: "get_audience_vs_bare_sql",
      label: "GET …/audiences/:id vs bare route + 1 SQL query",
      unit: "req/s",
      value: service.requestsPerSec,
      baseline: sql.requestsPerSec,
      baselineLabel: `bare route + SELECT, itself ${(sql.requestsPerSec / bareResult.requestsPerSec).toFixed(2)}× bare`,
      ratio: service.requestsPerSec / sql.requestsPerSec,
      target: "(info)",
      pass: null,
      throughput: service.requestsPerSec,
      medianMs: service.p50Ms,
      p99Ms: service.p99Ms,
      baselineMedianMs: sql.p50Ms,
      baselineP99Ms: sql.p99Ms,
    });
  }
}

function getRow(result: LoadResult, bareRps: number) {
  return {
    unit: "req/s",
    value: result.requestsPerSec,
    baseline: bareRps,
    baselineLabel: "bare Fastify route",
    ratio: result.requestsPerSec / bareRps,
    target: "≥ 0.40× bare",
    pass: result.requestsPerSec / bareRps >= 0.4,
    throughput: result.requestsPerSec,
    medianMs: result.p50Ms,
    p99Ms: result.p99Ms,
  };
}

/** GET …/audiences/:id under load on the running service (used again after a restart). */
export async function measureGet(ctx: Context, audienceId: string, bareRps: number) {
  const url = `${ctx.service.baseUrl}${ws(ctx)}/audiences/${audienceId}`;
  const headers = { authorization: `Bearer ${ctx.apiKey}` };
  const { connections, loadSeconds, loadWarmup } = ctx.opts;
  await autocannon(url, { connections, seconds: loadWarmup, headers });
  const done = measure(ctx);
  const result = await autocannon(url, { connections, seconds: loadSeconds, headers });
  const used = done();
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`GET ${url}: ${result.non2xx} non-2xx answers and ${result.errors} errors of ${result.total}`);
  }
  return { ...getRow(result, bareRps), ...used };
}

/** Member data of the import scenario; version 1 changes company and role (a real merge). */
function importMember(prefix: "p" | "q", n: number, version: 0 | 1): MemberWithData {
  const id = `${prefix}${pad(n)}`;
  const email = `${id}@example.com`;
  const fields = {
    firstName: `First${n}`,
    lastName: `Last${n}`,
    company: version === 0 ? `Company ${n % 997}` : `Company ${n % 997} Ltd`,
    role: version === 0 ? "Engineer" : "Engineering manager",
  };
  return { id, email, fields, folded: JSON.stringify(foldMember({ id, email, fields, alternativeEmails: [] })) };
}

const asInput = ({ id, email, fields }: MemberWithData) => ({ id, email, fields });

/**
 * Scenario: members with e-mail and 4 fields, half of them existing (with older data: merged),
 * half new, into a new audience of a second workspace (the big workspace keeps its size).
 */
export async function bulkAddWithData(ctx: Context): Promise<void> {
  const { dataSize, batch } = ctx.opts;
  const existing = Math.ceil(dataSize / 2);
  const created = await ctx.admin.call<{ id: string }>("POST", "/v0/workspaces", { name: "Bench data import" }, 201);
  const workspaceId = created.body.id;
  const key = await ctx.admin.call<{ key: string }>(
    "POST",
    `/v0/workspaces/${workspaceId}/api-keys`,
    { name: "bench" },
    201,
  );
  const api = createClient(ctx.service.baseUrl, key.body.key);
  try {
    await rawSql.workspace(ctx.raw, workspaceId);
    ctx.log(`bulk add with data: seeding ${existing} members (raw upsert, POST …/members)`);
    for (let from = 0; from < existing; from += batch) {
      checkTime(ctx);
      const members = range(from, Math.min(existing, from + batch), String).map((_, i) =>
        importMember("p", from + i, 0),
      );
      await rawSql.upsertMembers(ctx.raw, workspaceId, null, members);
      await api.call("POST", `${ws(ctx, workspaceId)}/members`, { members: members.map(asInput) }, 200);
    }
    const audienceId = await createAudience(ctx, "Bench: import", workspaceId, api);
    // Entry g of the import: even → existing member g/2 with new data, odd → a new member.
    const entries = (from: number) =>
      range(from, Math.min(dataSize, from + batch), String).map((_, i) => {
        const g = from + i;
        return g % 2 === 0 ? importMember("p", g / 2, 1) : importMember("q", (g - 1) / 2, 0);
      });
    ctx.log(`bulk add with data: ${dataSize / batch} × (raw unnest upsert, POST …/members) of ${batch} members`);
    const rawMs: number[] = [];
    const serviceMs: number[] = [];
    const done = measure(ctx);
    for (let from = 0; from < dataSize; from += batch) {
      checkTime(ctx);
      const members = entries(from);
      rawMs.push(await timed(() => rawSql.upsertMembers(ctx.raw, workspaceId, audienceId, members)));
      const res = await api.call<{ added: number; created: number; merged: number }>(
        "POST",
        `${ws(ctx, workspaceId)}/audiences/${audienceId}/members`,
        { members: members.map(asInput) },
        200,
      );
      const merged = members.filter((m) => m.id.startsWith("p")).length;
      const { added, created: fresh } = res.body;
      if (added !== members.length || res.body.merged !== merged || fresh !== members.length - merged) {
        throw new Error(`bulk add with data: unexpected result ${JSON.stringify(res.body)}`);
      }
      serviceMs.push(res.ms);
    }
    ctx.rows.push({
      ...rateRow(dataSize, serviceMs, rawMs, {
        scenario: "bulk_add_with_data_merge",
        label: `bulk add ${thousands(dataSize)} with e-mail + 4 fields, half merged`,
        baselineLabel: "unnest upsert",
        target: "≥ 0.35× raw",
        minRatio: 0.35,
      }),
      ...done(),
    });
  } finally {
    api.close();
  }
}

/** Scenario: merge two audiences of size/2 members each, overlapping by half. */
export async function mergeAudiences(ctx: Context): Promise<void> {
  const { size, batch } = ctx.opts;
  const half = size / 2;
  const sources = [
    { name: "Bench: merge source 1", from: 0, to: half },
    { name: "Bench: merge source 2", from: size / 4, to: size / 4 + half },
  ];
  const ids: string[] = [];
  for (const source of sources) ids.push(await createAudience(ctx, source.name));
  ctx.log(`merge: filling two audiences of ${half} existing members (raw insert, POST …/members)`);
  const rawMs: number[] = [];
  const serviceMs: number[] = [];
  const fill = measure(ctx);
  for (const [i, source] of sources.entries()) {
    const audienceId = ids[i] as string;
    for (let from = source.from; from < source.to; from += batch) {
      checkTime(ctx);
      const memberIds = range(from, Math.min(source.to, from + batch), bigId);
      rawMs.push(await timed(() => rawSql.includeExisting(ctx.raw, ctx.workspaceId, audienceId, memberIds)));
      const res = await ctx.api.call<{ added: number; created: number }>(
        "POST",
        `${ws(ctx)}/audiences/${audienceId}/members`,
        { memberIds },
        200,
      );
      if (res.body.added !== memberIds.length || res.body.created !== 0) {
        throw new Error(`merge fill: unexpected result ${JSON.stringify(res.body)}`);
      }
      serviceMs.push(res.ms);
    }
  }
  ctx.rows.push({
    ...rateRow(2 * half, serviceMs, rawMs, {
      scenario: "bulk_add_existing_ids",
      label: `bulk add ${thousands(2 * half)} existing members (merge sources)`,
      baselineLabel: "unnest INSERT",
      target: "(info)",
    }),
    ...fill(),
  });

  ctx.log("merge: raw union, then POST …/audiences/merge");
  const rawTarget = "aud_rawMergeTarget0000";
  await rawSql.audience(ctx.raw, ctx.workspaceId, rawTarget, "Bench: merged (raw)");
  const rawMergeMs = await timed(() => rawSql.union(ctx.raw, ctx.workspaceId, rawTarget, ids));
  const done = measure(ctx);
  const res = await ctx.api.call<{ id: string }>(
    "POST",
    `${ws(ctx)}/audiences/merge`,
    { name: "Bench: merged", audienceIds: ids },
    201,
  );
  const used = done();
  const expected = (3 * size) / 4;
  const page = await ctx.api.call<{ totalCount: number }>(
    "GET",
    `${ws(ctx)}/audiences/${res.body.id}/members?limit=1`,
    undefined,
    200,
  );
  if (page.body.totalCount !== expected) {
    throw new Error(`merge: expected ${expected} members, got ${page.body.totalCount}`);
  }
  ctx.rows.push({
    ...secondsRow(res.ms, rawMergeMs, 3, {
      scenario: "merge_audiences",
      label: `merge two ${thousands(half)}-member audiences (50% overlap)`,
      baselineLabel: "one INSERT … SELECT bit_or",
    }),
    ...used,
  });
}

/** A one-off operation's row: its seconds against the raw statements', with a ceiling in seconds. */
function secondsRow(
  serviceMs: number,
  rawMs: number,
  maxSeconds: number,
  row: Pick<ResultRow, "scenario" | "label" | "baselineLabel">,
): ResultRow {
  return {
    ...row,
    unit: "s",
    value: serviceMs / 1_000,
    baseline: rawMs / 1_000,
    ratio: serviceMs / rawMs,
    target: `≤ ${maxSeconds} s`,
    pass: serviceMs / 1_000 <= maxSeconds,
    medianMs: serviceMs,
  };
}

const suffixRule = (digits: string[]) => ({
  any: digits.map((value) => ({ field: "id", op: "endsWith", value })),
});
/** How many of the ids 0 … size-1 end with one of the digits. */
const countEndingIn = (size: number, digits: string[]) =>
  digits.map(Number).reduce((total, d) => total + (size > d ? Math.floor((size - 1 - d) / 10) + 1 : 0), 0);

/** Scenario: set, then change, the rule of an audience of the big workspace; each recomputes it over every member. */
export async function filterChange(ctx: Context): Promise<void> {
  const { size } = ctx.opts;
  const steps = [
    { scenario: "filter_set", label: "set a rule (none → 50% match)", digits: ["0", "1", "2", "3", "4"] },
    { scenario: "filter_change", label: "change the rule (30% leave, 30% join)", digits: ["3", "4", "5", "6", "7"] },
  ];
  const audienceId = await createAudience(ctx, "Bench: by rule");
  for (const step of steps) {
    checkTime(ctx);
    ctx.log(`${step.scenario}: raw recompute over ${size} members, then PUT …/filter`);
    const rawMs = await timed(() => rawSql.recomputeBySuffix(ctx.raw, ctx.workspaceId, audienceId, step.digits));
    const done = measure(ctx);
    const res = await ctx.api.call<{ memberCount: number }>(
      "PUT",
      `${ws(ctx)}/audiences/${audienceId}/filter`,
      { filter: suffixRule(step.digits) },
      200,
    );
    const used = done();
    const expected = countEndingIn(size, step.digits);
    if (res.body.memberCount !== expected) {
      throw new Error(`${step.scenario}: expected ${expected} members, got ${res.body.memberCount}`);
    }
    ctx.rows.push({
      ...secondsRow(res.ms, rawMs, 10, {
        scenario: step.scenario,
        label: `${step.label}, ${thousands(size)}-member workspace`,
        baselineLabel: "one statement: scan, chunks, upsert",
      }),
      ...used,
    });
  }
}

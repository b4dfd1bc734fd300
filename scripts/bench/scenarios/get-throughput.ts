import { createClient } from "../http.ts";
import { procStatusMb } from "../process-memory.ts";
import { autocannon, type LoadResult, startBareServer } from "../processes.ts";
import { type BareRoute, type Context, checkTime, measure, ws } from "./scenario-context.ts";

/**
 * Scenario: GET …/audiences/:id under load (autocannon, its own process), against a bare Fastify
 * route in another process, and that route plus the SQL query getAudience makes when its audience
 * cache misses. The three are measured in turn, `rounds` times; each figure is its best round.
 * Resolves to what the bare route measured, the run's raw HTTP limit.
 */
export async function getThroughput(ctx: Context, audienceId: string): Promise<BareRoute> {
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
  let bareRssMb: number | undefined;
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
    bareRssMb = procStatusMb(bare.pid, "VmHWM") ?? undefined;
  } finally {
    await Promise.all([bare.stop(), bareSql.stop()]);
  }
  const bareResult = best.get("bare") as LoadResult;
  const service = best.get("service") as LoadResult;
  ctx.rows.push({
    ...getRow(service, bareResult.requestsPerSec),
    metric: "get_audience_throughput",
    target: "get_audience_throughput",
    label: `GET …/audiences/:id throughput (best of ${rounds})`,
    ...serviceUsage,
  });
  const sql = best.get("bareSql");
  if (sql) {
    ctx.rows.push({
      metric: "get_audience_vs_bare_sql",
      label: "GET …/audiences/:id vs bare route + 1 SQL query",
      unit: "req/s",
      value: service.requestsPerSec,
      baseline: sql.requestsPerSec,
      baselineLabel: `bare route + SELECT, itself ${(sql.requestsPerSec / bareResult.requestsPerSec).toFixed(2)}× bare`,
      ratio: service.requestsPerSec / sql.requestsPerSec,
      throughput: service.requestsPerSec,
      medianMs: service.p50Ms,
      p99Ms: service.p99Ms,
      baselineMedianMs: sql.p50Ms,
      baselineP99Ms: sql.p99Ms,
    });
  }
  return { rps: bareResult.requestsPerSec, rssMb: bareRssMb };
}

function getRow(result: LoadResult, bareRps: number) {
  return {
    unit: "req/s",
    value: result.requestsPerSec,
    baseline: bareRps,
    baselineLabel: "bare Fastify route",
    ratio: result.requestsPerSec / bareRps,
    throughput: result.requestsPerSec,
    medianMs: result.p50Ms,
    p99Ms: result.p99Ms,
  };
}

/**
 * Scenario: GET …/audiences/:id again, on the server restarted with rate limiting on, against the
 * bare route's figure of getThroughput.
 */
export async function getThroughputRateLimited(ctx: Context, audienceId: string, bareRps: number): Promise<void> {
  const path = `${ws(ctx)}/audiences/${audienceId}`;
  const probe = createClient(ctx.service.baseUrl, ctx.apiKey);
  const answer = await probe.call("GET", path, undefined, 200).finally(() => probe.close());
  if (answer.headers["ratelimit-limit"] === undefined) {
    throw new Error("rate limiting is not on: GET …/audiences/:id answered without a RateLimit-Limit header");
  }
  const url = `${ctx.service.baseUrl}${path}`;
  const headers = { authorization: `Bearer ${ctx.apiKey}` };
  const { connections, loadSeconds, loadWarmup } = ctx.opts;
  await autocannon(url, { connections, seconds: loadWarmup, headers });
  const done = measure(ctx);
  const result = await autocannon(url, { connections, seconds: loadSeconds, headers });
  const used = done();
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`GET ${url}: ${result.non2xx} non-2xx answers and ${result.errors} errors of ${result.total}`);
  }
  ctx.rows.push({
    ...getRow(result, bareRps),
    ...used,
    metric: "get_audience_throughput_rate_limited",
    label: "GET …/audiences/:id throughput, rate limiting on",
    // As src/platform/http/rate-limit.ts counts: on PostgreSQL the server processes share their counts.
    note: `limiter: counts in memory${ctx.opts.store === "postgres" ? ", added to rate_limit_buckets every 0.1 s" : ""}`,
  });
}

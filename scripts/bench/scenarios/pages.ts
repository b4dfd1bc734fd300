import { encodeCursor } from "../../../src/domain/cursor.ts";
import { rawSql, timed } from "../raw.ts";
import { summarize } from "../stats.ts";
import { bigIdAtDepth } from "./member-ids.ts";
import { latencyRow } from "./result-rows.ts";
import { type Context, checkTime, measure, ws } from "./scenario-context.ts";

/** Scenario: a page of 100 members at depth 0, 50% and 99% of the big audience, with totalCount. */
export async function pages(ctx: Context, audienceId: string): Promise<void> {
  const { size, pageWarmup, pageSamples } = ctx.opts;
  if (ctx.opts.store === "postgres") await pageBeforeAnalyze(ctx, audienceId);
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
    const row = latencyRow(serviceMs, rawMs, {
      metric: `page_depth_${depthLabel}`,
      label: (p99) => `page of 100 at depth ${depthLabel}: p50 (p99 ${p99.toFixed(1)} ms)`,
      target: "page_depth",
    });
    medians.push({ service: row.value, raw: row.baseline as number });
    ctx.rows.push({ ...row, ...done() });
  }
  const first = medians[0] as { service: number; raw: number };
  const deepest = Math.max(...medians.slice(1).map((m) => m.service));
  const deepestRaw = Math.max(...medians.slice(1).map((m) => m.raw));
  ctx.rows.push({
    metric: "page_deep_vs_first",
    label: "slowest deep page p50 / first page p50",
    unit: "×",
    value: deepest / first.service,
    baseline: deepestRaw / first.raw,
    baselineLabel: "same ratio, raw",
    ratio: null,
    target: "page_deep_vs_first",
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
    metric: "page_depth_0_before_analyze",
    label: `page of 100 at depth 0 before ANALYZE: p50 of ${service.count}`,
    unit: "ms",
    value: service.median,
    baseline: raw.median,
    baselineLabel: "keyset SQL p50, same stale statistics",
    ratio: service.median / raw.median,
    medianMs: service.median,
    p99Ms: service.max,
    baselineMedianMs: raw.median,
    baselineP99Ms: raw.max,
    ...done(),
  });
}

import type { Store } from "../../../src/platform/db/database.ts";
import type { Client } from "../http.ts";
import { rawSql, timed } from "../raw.ts";
import { summarize } from "../stats.ts";
import { activityClock, CLOCK_WINDOWS } from "./activity-clock.ts";
import {
  asInput,
  bytesPerActivity,
  DAY,
  type Entry,
  fillActivities,
  memberId,
  plainCopy,
  rawIngestWork,
  rawInsert,
  rawRuleWritten,
  rawTimeline,
  TIMELINE_EXTRA,
  typeIds,
} from "./activity-data.ts";
import { latencyRow, rateRow, secondsRow, thousands } from "./result-rows.ts";
import { type Context, checkTime, eventsPublished, measure, type StoreWriter } from "./scenario-context.ts";

/** Rounds of the rule set (each on a new audience), beside as many raw statements: the p50 is kept. */
const ROUNDS = 3;
const RULE = { activity: "order.placed", count: { op: "gte", value: 2 }, withinLast: "P30D" };

/**
 * Scenario: issue 46's activities. `--activities` activities over `--size` members written
 * straight into both stores (358 days of them, on midnights), then: ingests of --batch
 * activities per request without any activity audience (beside the raw INSERT, and raw SQL doing
 * only an ingest's own work: how near the INSERT any ingest can come); the rule order.placed ≥ 2 in P30D set
 * on three audiences; on PostgreSQL, clock ticks of the 10 window audiences (activity-clock.ts);
 * ten more audiences (20 in all, each counting order.placed); ingests again, and one activity
 * per request; a timeline page of 100; and the bytes each activity takes. Each beside raw SQL on
 * the raw baseline's store, which holds the same activities.
 */
export async function activities(ctx: Context, writeServiceStore: StoreWriter, store?: Store): Promise<void> {
  const { size: members, activities: count, batch } = ctx.opts;
  const { body: workspace } = await ctx.admin.call<{ id: string }>(
    "POST",
    "/v0/workspaces",
    { name: "Bench activities" },
    201,
  );
  const workspaceId = workspace.id;
  const keyPath = `/v0/workspaces/${workspaceId}/api-keys`;
  const { body: key } = await ctx.admin.call<{ key: string }>("POST", keyPath, { name: "activities" }, 201);
  const base = new Date(Math.ceil(Date.now() / DAY) * DAY + DAY);
  const partitioned = ctx.opts.store === "postgres";
  ctx.log(`activities: writing ${thousands(members)} members and ${thousands(count)} activities into both stores`);
  await rawSql.workspace(ctx.raw, workspaceId);
  await fillActivities(ctx.raw, workspaceId, members, count, base, partitioned);
  await writeServiceStore((db) => fillActivities(db, workspaceId, members, count, base, partitioned));
  await ctx.analyze();
  // After the write: on the embedded store it restarts the server, on another port.
  const api = ctx.clientFor(key.key);
  const types = await typeIds(ctx.raw, workspaceId);
  const wsPath = `/v0/workspaces/${workspaceId}`;

  // Ingests: 3 in 10 entries order.placed, on midnights of the last 28 days (so that no clock
  // tick of the morning crosses them), spread over the members.
  let next = 0;
  const entries = (n: number, prefix: string): Entry[] =>
    Array.from({ length: n }, () => {
      const k = next++;
      const type = k % 10 < 3 ? "order.placed" : k % 10 < 8 ? "session.attended" : "page.viewed";
      return {
        id: `${prefix}${k}`,
        seq: 1 + ((k * 104_729) % members),
        type,
        occurredAt: new Date(base.getTime() - (2 + (k % 28)) * DAY).toISOString(),
        ...(type === "order.placed" ? { properties: { amount: k % 200, currency: "EUR" } } : {}),
      };
    });
  const ingests = ctx.opts.quick ? 2 : 10;
  const ingest = async (label: string, rawWork = false) => {
    const serviceMs: number[] = [];
    const rawMs: number[] = [];
    const workMs: number[] = [];
    const done = measure(ctx);
    for (let i = 0; i < ingests; i++) {
      checkTime(ctx);
      const batchOf = entries(batch, "in");
      rawMs.push(await timed(() => rawInsert(ctx.raw, workspaceId, types, batchOf)));
      if (rawWork) {
        // Rows like the batch's but for order.placed, stored as page.viewed: the raw baselines of
        // the rule set and the clock count the same activities as the service.
        const work = entries(batch, "rw").map((e) => (e.type === "order.placed" ? { ...e, type: "page.viewed" } : e));
        workMs.push(await timed(() => rawIngestWork(ctx.raw, workspaceId, work)));
      }
      const res = await api.call<{ accepted: number }>(
        "POST",
        `${wsPath}/activities`,
        { activities: batchOf.map(asInput) },
        200,
      );
      if (res.body.accepted !== batch) throw new Error(`activities: ${res.body.accepted} of ${batch} accepted`);
      serviceMs.push(res.ms);
      // The next batch is measured once the relay has published this one's events.
      await eventsPublished(ctx, workspaceId, api);
    }
    ctx.log(`activities: ingested ${thousands(ingests * batch)} ${label}`);
    return { serviceMs, rawMs, workMs, used: done() };
  };
  const ingestRow = (
    result: Awaited<ReturnType<typeof ingest>>,
    metric: string,
    target: "activity_ingest" | "activity_ingest_with_rules",
    audiences: string,
  ) => ({
    ...rateRow(ingests * batch, result.serviceMs, result.rawMs, {
      metric,
      target,
      label: `ingest ${thousands(ingests * batch)} activities (${thousands(batch)}/request), ${audiences}, ${thousands(count)} stored`,
      baselineLabel: "INSERT … SELECT FROM unnest of the same rows",
    }),
    ...result.used,
  });
  const alone = await ingest("without audiences", true);
  ctx.rows.push(ingestRow(alone, "activity_ingest", "activity_ingest", "no audience"));
  // How near the INSERT alone an ingest can come at all: raw SQL doing only an ingest's own work.
  ctx.rows.push(
    rateRow(ingests * batch, alone.workMs, alone.rawMs, {
      metric: "activity_ingest_raw_work",
      label: `raw SQL doing an ingest's own work: members by id, types by name, ids claimed unique (${thousands(batch)}/statement)`,
      baselineLabel: "INSERT … SELECT FROM unnest of the same rows",
    }),
  );

  // The rule set, beside the raw aggregation written as chunks.
  const typeId = types.get("order.placed") as number;
  const rawMs: number[] = [];
  const serviceMs: number[] = [];
  const done = measure(ctx);
  for (let round = 1; round <= ROUNDS; round++) {
    checkTime(ctx);
    ctx.log(`activity rule ${round}/${ROUNDS}: raw aggregation into chunks, then PUT …/filter`);
    const rawAudience = `aud_rawActivityRule${round}`;
    await rawSql.audience(ctx.raw, workspaceId, rawAudience, `raw ${round}`);
    let expected = 0;
    const from = new Date(Date.now() - 30 * DAY);
    rawMs.push(
      await timed(async () => {
        expected = await rawRuleWritten(ctx.raw, workspaceId, rawAudience, typeId, from, 2);
      }),
    );
    const id = await audience(api, wsPath, `Ordered twice in 30 days ${round}`, RULE, serviceMs);
    if (id.memberCount !== expected) throw new Error(`activity rule: expected ${expected}, got ${id.memberCount}`);
    await eventsPublished(ctx, workspaceId, api);
  }
  ctx.rows.push({
    ...secondsRow(summarize(serviceMs).median, summarize(rawMs).median, {
      metric: "activity_rule_set",
      target: "activity_rule_written",
      label: `set a rule order.placed count ≥ 2 withinLast P30D, ${thousands(members)} members, ${thousands(count)} activities: p50 of ${ROUNDS}`,
      baselineLabel:
        "one statement: the aggregation by the type's index into chunks, written as match and member chunks, p50",
    }),
    ...done(),
  });

  // The window audiences of the clock: the rule rows' three and seven more.
  for (const days of CLOCK_WINDOWS) {
    const filter = { activity: "order.placed", withinLast: `P${days}D` };
    await audience(api, wsPath, `Ordered within ${days} days`, filter);
  }
  if (store) {
    await activityClock(ctx, store, { workspaceId, api, types, base, audiences: ROUNDS + CLOCK_WINDOWS.length });
  }
  // Ten more, without a window: 20 audiences count order.placed.
  for (let i = 0; i < 10; i++) {
    const filter = {
      activity: "order.placed",
      where: { field: "properties.amount", op: "gte", value: String(20 * i) },
    };
    await audience(api, wsPath, `Ordered for ${20 * i} or more`, filter);
  }
  await eventsPublished(ctx, workspaceId, api);
  const twenty = "20 activity audiences";
  ctx.rows.push(
    ingestRow(await ingest("with 20 audiences"), "activity_ingest_rules", "activity_ingest_with_rules", twenty),
  );

  // One activity a request.
  const one = { ms: [] as number[], raw: [] as number[] };
  const single = measure(ctx);
  for (let i = 0; i < ctx.opts.pageWarmup + ctx.opts.pageSamples; i++) {
    checkTime(ctx);
    const [entry] = entries(1, "one");
    const e = { ...(entry as Entry), type: "order.placed", properties: { amount: 50 } };
    const rawOne = await timed(() => rawInsert(ctx.raw, workspaceId, types, [e]));
    const res = await api.call("POST", `${wsPath}/activities`, { activities: [asInput(e)] }, 200);
    if (i >= ctx.opts.pageWarmup) {
      one.ms.push(res.ms);
      one.raw.push(rawOne);
    }
  }
  ctx.rows.push({
    ...latencyRow(one.ms, one.raw, {
      metric: "activity_ingest_one",
      // The bound is PostgreSQL's; on the embedded store the row informs.
      target: ctx.opts.store === "postgres" ? "activity_ingest_one" : undefined,
      label: (p99) => `one order.placed per request, ${twenty}: p50 (p99 ${p99.toFixed(1)} ms)`,
      baseline: "INSERT of the row",
    }),
    ...single(),
  });
  await eventsPublished(ctx, workspaceId, api);

  // A timeline page of 100: member 1 has TIMELINE_EXTRA activities and more.
  const page = { ms: [] as number[], raw: [] as number[] };
  const read = measure(ctx);
  for (let i = 0; i < ctx.opts.pageWarmup + ctx.opts.pageSamples; i++) {
    checkTime(ctx);
    const rawPage = await timed(() => rawTimeline(ctx.raw, workspaceId, memberId(1), 101));
    const res = await api.call<{ results: unknown[] }>(
      "GET",
      `${wsPath}/members/${memberId(1)}/activities?limit=100`,
      undefined,
      200,
    );
    if (res.body.results.length !== 100) throw new Error(`timeline: ${res.body.results.length} activities`);
    if (i >= ctx.opts.pageWarmup) {
      page.ms.push(res.ms);
      page.raw.push(rawPage);
    }
  }
  ctx.rows.push({
    ...latencyRow(page.ms, page.raw, {
      metric: "activity_timeline",
      target: "activity_timeline",
      label: (p99) =>
        `a member's timeline, page of 100 of ${thousands(TIMELINE_EXTRA)}+: p50 (p99 ${p99.toFixed(1)} ms)`,
    }),
    ...read(),
  });
  api.close();

  // Storage: the service's table (its partitions and indexes) and its client ids beside a plain
  // table of the raw rows with activities' former index of ids.
  await plainCopy(ctx.raw);
  const raw = await bytesPerActivity(ctx.raw, "plain_activities");
  let service = { bytes: 0, rows: 0 };
  await writeServiceStore(async (db) => {
    service = await bytesPerActivity(db, "activities", ["activity_ids"]);
  });
  const perService = service.bytes / service.rows;
  const perRaw = raw.bytes / raw.rows;
  ctx.rows.push({
    metric: "activity_storage",
    label: `bytes per activity, the table with its indexes and activity_ids (${thousands(service.rows)} activities, ${(service.bytes / 2 ** 20).toFixed(0)} MiB)`,
    unit: "bytes/activity",
    value: perService,
    baseline: perRaw,
    baselineLabel: "a plain table with the same columns and indexes, the same rows inserted in arrival order",
    ratio: perService / perRaw,
    target: "activity_storage",
  });
}

/** A new audience with this rule; its rule set's milliseconds pushed to `ms` when given. */
async function audience(api: Client, wsPath: string, name: string, filter: unknown, ms?: number[]) {
  const { body } = await api.call<{ id: string }>("POST", `${wsPath}/audiences`, { name }, 201);
  const res = await api.call<{ memberCount: number }>("PUT", `${wsPath}/audiences/${body.id}/filter`, { filter }, 200);
  ms?.push(res.ms);
  return { id: body.id, memberCount: res.body.memberCount };
}

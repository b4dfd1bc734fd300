import { performance } from "node:perf_hooks";
import type { Client } from "../http.ts";
import { bareDeliveries, type Receiver } from "../receiver.ts";
import { summarize } from "../stats.ts";
import { type Context, checkTime, measure } from "./scenario-context.ts";

/** A workspace of its own for a scenario, and a client with its key. */
async function freshWorkspace(ctx: Context, name: string): Promise<{ id: string; api: Client }> {
  const { body: workspace } = await ctx.admin.call<{ id: string }>("POST", "/v0/workspaces", { name }, 201);
  const path = `/v0/workspaces/${workspace.id}/api-keys`;
  const { body: key } = await ctx.admin.call<{ key: string }>("POST", path, { name }, 201);
  return { id: workspace.id, api: ctx.clientFor(key.key) };
}

async function subscribe(api: Client, workspaceId: string, url: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    ids.push((await api.call<{ id: string }>("POST", `/v0/workspaces/${workspaceId}/webhooks`, { url }, 201)).body.id);
  }
  return ids;
}

async function unsubscribe(api: Client, workspaceId: string, ids: string[]): Promise<void> {
  for (const id of ids) await api.call("DELETE", `/v0/workspaces/${workspaceId}/webhooks/${id}`, undefined, 204);
}

/** Writes `count` events (audience creations), `concurrency` requests at a time. */
async function writeEvents(api: Client, workspaceId: string, count: number, concurrency: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const n = next++;
      await api.call("POST", `/v0/workspaces/${workspaceId}/audiences`, { name: `Event ${n}` }, 201);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** GET …/audiences/:id, `samples` times in a row: latencies in ms. */
async function readLatencies(ctx: Context, audienceId: string, samples: number): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < samples; i++) {
    ms.push(
      (await ctx.api.call("GET", `/v0/workspaces/${ctx.workspaceId}/audiences/${audienceId}`, undefined, 200)).ms,
    );
  }
  return ms;
}

/**
 * Scenarios: how soon a committed change reaches a receiver, how many deliveries a second a
 * server makes to one that answers at once (beside a bare client's), and API latency while
 * 10,000 deliveries wait on a receiver that never answers.
 */
export async function webhookDelivery(
  ctx: Context,
  audienceId: string,
  { receiver, hanging }: { receiver: Receiver; hanging: Receiver },
): Promise<void> {
  const quick = ctx.opts.quick;
  // Commit-to-delivery latency: one write at a time, each waited for at the receiver.
  const latency = await freshWorkspace(ctx, "Bench webhook latency");
  await subscribe(latency.api, latency.id, receiver.url, 1);
  const samples: number[] = [];
  ctx.log(`webhooks: commit-to-delivery latency of ${quick ? 50 : 300} writes`);
  for (let i = 0; i < (quick ? 50 : 300); i++) {
    checkTime(ctx);
    const before = receiver.arrivals.length;
    await latency.api.call("POST", `/v0/workspaces/${latency.id}/audiences`, { name: `Latency ${i}` }, 201);
    const answered = performance.now();
    await receiver.until(before + 1, 30_000);
    samples.push(Math.max(0, (receiver.arrivals[before]?.at ?? answered) - answered));
  }
  const lat = summarize(samples);
  ctx.rows.push({
    metric: "webhook_latency",
    label: `webhook delivery after the write's answer: p50 (p99 ${lat.p99.toFixed(0)} ms)`,
    unit: "ms",
    value: lat.median,
    baseline: null,
    baselineLabel: "local receiver answering at once",
    ratio: null,
    target: "webhook_latency",
    medianMs: lat.median,
    p99Ms: lat.p99,
  });
  latency.api.close();

  // Sustained deliveries: 20 webhooks, so each event is 20 deliveries.
  const events = quick ? 100 : 500;
  const burst = await freshWorkspace(ctx, "Bench webhook throughput");
  const hooks = await subscribe(burst.api, burst.id, receiver.url, 20);
  const start = receiver.arrivals.length;
  ctx.log(`webhooks: ${events} events × 20 webhooks = ${events * 20} deliveries to a receiver that answers at once`);
  const done = measure(ctx);
  await writeEvents(burst.api, burst.id, events, 4);
  await receiver.until(start + events * 20, 300_000);
  const first = receiver.arrivals[start]?.at ?? 0;
  const last = receiver.arrivals.at(-1)?.at ?? first;
  const rate = (events * 20) / ((last - first) / 1_000);
  const bare = await bareDeliveries(receiver.url, events * 20, 32);
  ctx.rows.push({
    metric: "webhook_throughput",
    label: `sustained webhook deliveries (${events * 20} to one receiver)`,
    unit: "deliveries/s",
    value: rate,
    baseline: bare,
    baselineLabel: "bare HTTP client, 32 in flight",
    ratio: rate / bare,
    target: "webhook_throughput",
    throughput: rate,
    ...done(),
  });
  await unsubscribe(burst.api, burst.id, hooks);
  burst.api.close();

  // API latency while 10,000 deliveries wait on a receiver that never answers.
  const idle = summarize(await readLatencies(ctx, audienceId, quick ? 200 : 2_000));
  const stuck = await freshWorkspace(ctx, "Bench webhook backlog");
  const stuckHooks = await subscribe(stuck.api, stuck.id, hanging.url, 20);
  ctx.log(`webhooks: ${events * 20} deliveries pending to a receiver that never answers; reading meanwhile`);
  await writeEvents(stuck.api, stuck.id, events, 4);
  const busy = summarize(await readLatencies(ctx, audienceId, quick ? 200 : 2_000));
  ctx.rows.push({
    metric: "api_latency_with_backlog",
    label: `GET …/audiences/:id p50 while ${events * 20} deliveries hang (p99 ${busy.p99.toFixed(1)} ms, before ${idle.p99.toFixed(1)} ms)`,
    unit: "ms",
    value: busy.median,
    baseline: idle.median,
    baselineLabel: "the same, before (p50)",
    ratio: busy.median / idle.median,
    target: "api_latency_with_backlog",
    medianMs: busy.median,
    p99Ms: busy.p99,
    baselineMedianMs: idle.median,
    baselineP99Ms: idle.p99,
  });
  await unsubscribe(stuck.api, stuck.id, stuckHooks);
  stuck.api.close();
}

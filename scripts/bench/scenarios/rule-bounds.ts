import { MAX_FILTER_CONDITIONS } from "../../../src/features/membership/rules/filter.ts";
import { figuresOf, WORKSPACE_RULE_BOUNDS } from "../../../src/features/membership/rules/rule-bounds.ts";
import type { Client } from "../http.ts";
import { cpuSeconds } from "../process-memory.ts";
import { summarize } from "../stats.ts";
import { bigId, range } from "./member-ids.ts";
import { thousands } from "./result-rows.ts";
import { type Context, checkTime, eventsPublished, measure } from "./scenario-context.ts";

const B = WORKSPACE_RULE_BOUNDS;
/** Relative-time audiences: their conditions make B.timeConditions. */
const TIME_AUDIENCES = 5;
const DEPENDANT_CONDITIONS = 10;
const UPSERTED = 10_000;
const REMOVED = 5_000;
/**
 * A little more than the server's default TIME_RULES_INTERVAL_SECONDS: at least one clock tick.
 * With --quick, long enough to read the CPU twice: a smoke run shows the harness works.
 */
const IDLE_SECONDS = 65;
const QUICK_IDLE_SECONDS = 3;

const dataOf = (n: number, round: number) => ({ region: `r${(n + round * 7) % 50}`, tier: `t${(n + round) % 5}` });
const inX = (x: string) => ({ field: "audience", op: "in", value: x });

/**
 * The workspace's rules at every bound at once: B.dependants audiences naming X (each with
 * DEPENDANT_CONDITIONS conditions), B.timeConditions withinLast conditions, and field rules
 * holding the rest of B.conditions with `in` lists padded up to B.bytes.
 */
export function rulesAtBounds(x: string): unknown[] {
  const dependants = range(0, B.dependants, (i) => ({
    all: [
      inX(x),
      ...range(1, DEPENDANT_CONDITIONS, (j) => ({ field: "fields.tier", op: "ne", value: `t${(i + j) % 7}` })),
    ],
  }));
  const perTime = B.timeConditions / TIME_AUDIENCES;
  const timed = range(0, TIME_AUDIENCES, (i) => ({
    any: range(0, perTime, (j) => ({ field: "createdAt", op: "withinLast", value: `P${i * perTime + j + 1}D` })),
  }));
  const fixed = [...dependants, ...timed];
  const used = fixed.map((rule) => figuresOf(rule as never)).reduce((a, b) => a + b.conditions, 0);
  // The rest of the conditions in as few field rules as a rule's own limit allows.
  const fieldAudiences = Math.ceil((B.conditions - used) / MAX_FILTER_CONDITIONS);
  const perField = Math.floor((B.conditions - used) / fieldAudiences);
  const fields = (padding: number) =>
    range(0, fieldAudiences, (i) => ({
      any: range(0, perField, (j) => ({
        field: "fields.region",
        op: "in",
        value: [`r${(i * perField + j) % 50}`, ...range(0, 9, (k) => `x${i}-${j}-${k}-`.padEnd(padding, "x"))],
      })),
    }));
  const bytes = (rules: unknown[]) => rules.map((rule) => figuresOf(rule as never).bytes).reduce((a, b) => a + b, 0);
  let padding = 1_024;
  while (padding > 8 && bytes([...fixed, ...fields(padding)]) > B.bytes) padding--;
  return [...fixed, ...fields(padding)];
}

async function adds(api: Client, base: string, x: string, memberIds: string[]) {
  return (await api.call("POST", `${base}/audiences/${x}/members`, { memberIds }, 200)).ms;
}

/**
 * Scenario: what one member write costs in a workspace whose rules stand at every bound of
 * WORKSPACE_RULE_BOUNDS, beside the same write before the rules were set: an upsert of 10,000
 * changed members, one member added to the audience that the most rules name, and 5,000 removed
 * from it.
 */
export async function ruleBounds(ctx: Context): Promise<void> {
  const members = Math.min(ctx.opts.size, 200_000);
  const { body: workspace } = await ctx.admin.call<{ id: string }>(
    "POST",
    "/v0/workspaces",
    { name: "Bench bounds" },
    201,
  );
  const keyPath = `/v0/workspaces/${workspace.id}/api-keys`;
  const { body: key } = await ctx.admin.call<{ key: string }>("POST", keyPath, { name: "bounds" }, 201);
  const api = ctx.clientFor(key.key);
  const base = `/v0/workspaces/${workspace.id}`;
  ctx.log(`rule bounds: ${thousands(members)} members, then rules at the workspace's bounds`);
  for (let from = 0; from < members; from += ctx.opts.batch) {
    checkTime(ctx);
    const page = range(from, Math.min(members, from + ctx.opts.batch), (n) => ({ id: bigId(n), fields: dataOf(n, 0) }));
    await api.call("POST", `${base}/members`, { members: page }, 200);
  }
  const { body: named } = await api.call<{ id: string }>("POST", `${base}/audiences`, { name: "Named" }, 201);
  const x = named.id;
  const upserted = Math.min(UPSERTED, members);
  const removed = Math.min(REMOVED, Math.floor(members / 4));
  let round = 0;
  let next = 0;
  /** The three writes, `samples` times each (the removal once: its members are added back first). */
  const writes = async (samples: number) => {
    const upsertMs: number[] = [];
    const addMs: number[] = [];
    for (let s = 0; s < samples; s++) {
      checkTime(ctx);
      round++;
      const from = (round * upserted) % Math.max(1, members - upserted);
      const page = range(from, from + upserted, (n) => ({ id: bigId(n), fields: dataOf(n, round) }));
      upsertMs.push((await api.call("POST", `${base}/members`, { members: page }, 200)).ms);
      addMs.push(await adds(api, base, x, [bigId(next++ % members)]));
    }
    const block = range(members - removed, members, bigId);
    await adds(api, base, x, block);
    await eventsPublished(ctx, workspace.id, api);
    const { ms: removeMs } = await api.call("DELETE", `${base}/audiences/${x}/members`, { memberIds: block }, 200);
    return { upsert: summarize(upsertMs), add: summarize(addMs), removeMs };
  };
  const samples = ctx.opts.quick ? 3 : 10;
  await ctx.analyze();
  const before = await writes(samples);
  const rules = rulesAtBounds(x);
  const timePutMs: number[] = [];
  for (const [i, filter] of rules.entries()) {
    checkTime(ctx);
    const { body } = await api.call<{ id: string }>("POST", `${base}/audiences`, { name: `Bound ${i}` }, 201);
    const { ms } = await api.call("PUT", `${base}/audiences/${body.id}/filter`, { filter }, 200);
    if (JSON.stringify(filter).includes("withinLast")) timePutMs.push(ms);
  }
  // One more condition is refused: the rules stand at the bounds.
  const { body: extra } = await api.call<{ id: string }>("POST", `${base}/audiences`, { name: "Past" }, 201);
  await api.call("PUT", `${base}/audiences/${extra.id}/filter`, { filter: { field: "email", op: "exists" } }, 409);
  await eventsPublished(ctx, workspace.id, api);
  const done = measure(ctx);
  const after = await writes(samples);
  const common = { unit: "ms", ...done() };
  // The server idle but for its clock ticks over the rules' relative-time conditions.
  const idleSeconds = ctx.opts.quick ? QUICK_IDLE_SECONDS : IDLE_SECONDS;
  const idleCpu = cpuSeconds(ctx.service.pid) ?? 0;
  await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1_000));
  const idleShare = ((cpuSeconds(ctx.service.pid) ?? idleCpu) - idleCpu) / idleSeconds;
  const timePut = summarize(timePutMs);
  const figures = `${rules.length} rules: ${thousands(B.conditions)} conditions, ${thousands(B.timeConditions)} withinLast, ${B.dependants} naming the audience, ≤ ${thousands(B.bytes)} bytes`;
  ctx.rows.push(
    {
      metric: "rule_bounds_upsert",
      label: `upsert ${thousands(upserted)} changed members of ${thousands(members)}, ${figures}: p50`,
      value: after.upsert.median,
      baseline: before.upsert.median,
      baselineLabel: "the same upsert without rules, p50",
      ratio: after.upsert.median / before.upsert.median,
      target: "rule_bounds_upsert",
      medianMs: after.upsert.median,
      p99Ms: after.upsert.p99,
      ...common,
    },
    {
      metric: "rule_bounds_add_one",
      label: `add one member to an audience ${B.dependants} rules name, ${thousands(members)} members: p50`,
      value: after.add.median,
      baseline: before.add.median,
      baselineLabel: "the same add without rules, p50",
      ratio: after.add.median / before.add.median,
      target: "rule_bounds_add_one",
      medianMs: after.add.median,
      p99Ms: after.add.p99,
      ...common,
    },
    {
      metric: "rule_bounds_time_rule_put",
      label: `PUT of a rule with ${B.timeConditions / TIME_AUDIENCES} withinLast conditions, ${thousands(members)} members: p50`,
      value: timePut.median,
      baseline: null,
      baselineLabel: "",
      ratio: null,
      medianMs: timePut.median,
      p99Ms: timePut.p99,
      ...common,
    },
    {
      metric: "rule_bounds_idle_cpu",
      label: `the server's CPU while idle, ${B.timeConditions} withinLast conditions followed by the clock, over ${idleSeconds} s`,
      value: Math.round(idleShare * 1_000) / 10,
      unit: "%",
      baseline: null,
      baselineLabel: "",
      ratio: null,
    },
    {
      metric: "rule_bounds_remove",
      label: `remove ${thousands(removed)} members from an audience ${B.dependants} rules name`,
      value: after.removeMs,
      baseline: before.removeMs,
      baselineLabel: "the same removal without rules",
      ratio: after.removeMs / before.removeMs,
      ...common,
    },
  );
}

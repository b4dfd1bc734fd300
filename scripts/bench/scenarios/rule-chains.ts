import type { Client } from "../http.ts";
import { summarize } from "../stats.ts";
import { range } from "./member-ids.ts";
import { thousands } from "./result-rows.ts";
import { ruleOf } from "./scattered-updates.ts";
import { type Context, checkTime, measure } from "./scenario-context.ts";

const RULES = 100;
/** Chains root → B → C: B and C are the 20 audience rules, each root one of the 80 field rules. */
const CHAINS = 10;

const chainId = (n: number) => `c${String(n).padStart(7, "0")}`;
/** The members' data before the PATCHes: one of 50 regions, one of 5 tiers (ruleOf's fields). */
const dataOf = (n: number) => ({ region: `r${n % 50}`, tier: `t${n % 5}` });
/**
 * PATCH number p: the member moves into region r(p mod 10), the root of chain p mod 10, with a tier
 * that passes both links' conditions, so that every PATCH moves the member through a whole chain
 * (root, B, C), and out of its region before.
 */
const patchOf = (p: number) => ({ fields: { region: `r${p % CHAINS}`, tier: `t${p % 3}` } });

/** A link of a chain: the members of the previous audience, less one tier. */
const linkRule = (previous: string, tier: string) => ({
  all: [
    { field: "audience", op: "in", value: previous },
    { field: "fields.tier", op: "ne", value: tier },
  ],
});

interface Workspace {
  api: Client;
  base: string;
  /** The last link of each chain (none in the plain workspace). */
  ends: string[];
}

/**
 * A workspace of `members` members with data, then its 100 rule audiences: 100 field rules, or
 * 80 field rules and 10 chains of two audience rules each rooted in one of the 80.
 */
async function workspaceWithRules(ctx: Context, name: string, members: number, chains: boolean): Promise<Workspace> {
  const { body: workspace } = await ctx.admin.call<{ id: string }>("POST", "/v0/workspaces", { name }, 201);
  const keyPath = `/v0/workspaces/${workspace.id}/api-keys`;
  const { body: key } = await ctx.admin.call<{ key: string }>("POST", keyPath, { name: "chains" }, 201);
  const api = ctx.clientFor(key.key);
  const base = `/v0/workspaces/${workspace.id}`;
  const batch = ctx.opts.batch;
  for (let from = 0; from < members; from += batch) {
    checkTime(ctx);
    const page = range(from, Math.min(members, from + batch), (n) => ({ id: chainId(n), fields: dataOf(n) }));
    await api.call("POST", `${base}/members`, { members: page }, 200);
  }
  const rule = async (filter: unknown, i: number) => {
    const { body } = await api.call<{ id: string }>("POST", `${base}/audiences`, { name: `Rule ${i}` }, 201);
    await api.call("PUT", `${base}/audiences/${body.id}/filter`, { filter }, 200);
    return body.id;
  };
  const fieldRules = chains ? RULES - 2 * CHAINS : RULES;
  const ids: string[] = [];
  for (let i = 0; i < fieldRules; i++) ids.push(await rule(ruleOf(i), i));
  const ends: string[] = [];
  for (let k = 0; chains && k < CHAINS; k++) {
    // ruleOf(k) for k < 50 is region r(k): the root of chain k.
    const b = await rule(linkRule(ids[k] as string, "t4"), fieldRules + 2 * k);
    ends.push(await rule(linkRule(b, "t3"), fieldRules + 2 * k + 1));
  }
  return { api, base, ends };
}

/**
 * Scenario: PATCH of one member under 100 rule audiences of which 20 are audience rules in
 * chains 3 deep, beside the same PATCH under 100 field rules, in two workspaces of the same
 * members, alternately.
 */
export async function ruleChains(ctx: Context): Promise<void> {
  const members = ctx.opts.quick ? 2_000 : 100_000;
  ctx.log(`rule chains: two workspaces of ${thousands(members)} members, 100 rules each`);
  const plain = await workspaceWithRules(ctx, "Bench plain rules", members, false);
  const chained = await workspaceWithRules(ctx, "Bench rule chains", members, true);
  await ctx.analyze();
  const warmup = ctx.opts.pageWarmup;
  const samples = ctx.opts.quick ? 20 : 200;
  const plainMs: number[] = [];
  const chainedMs: number[] = [];
  const done = measure(ctx);
  for (let p = 0; p < warmup + samples; p++) {
    checkTime(ctx);
    const member = encodeURIComponent(chainId((p * 7_919) % members));
    const body = patchOf(p);
    const a = await plain.api.call("PATCH", `${plain.base}/members/${member}`, body, 200);
    const b = await chained.api.call("PATCH", `${chained.base}/members/${member}`, body, 200);
    if (p === 1) {
      // The member (of region r19 before) went through the whole chain 1: it is in its last link.
      const { body: list } = await chained.api.call<{ results: { id: string }[] }>(
        "GET",
        `${chained.base}/members/${member}/audiences`,
        undefined,
        200,
      );
      const end = chained.ends[p % CHAINS] as string;
      if (!list.results.some((audience) => audience.id === end)) {
        throw new Error(`rule chains: the PATCHed member is not in its chain's last audience ${end}`);
      }
    }
    if (p >= warmup) {
      plainMs.push(a.ms);
      chainedMs.push(b.ms);
    }
  }
  const chain = summarize(chainedMs);
  const flat = summarize(plainMs);
  ctx.rows.push({
    metric: "patch_member_rule_chains",
    label: `PATCH one member, 80 field rules + 20 audience rules in ${CHAINS} chains 3 deep, ${thousands(members)} members: p50 (p99 ${chain.p99.toFixed(1)} ms)`,
    unit: "ms",
    value: chain.median,
    baseline: flat.median,
    baselineLabel: `the same PATCH under 100 field rules, p50; p99 ${flat.p99.toFixed(1)} ms`,
    ratio: chain.median / flat.median,
    target: "patch_rule_chains",
    medianMs: chain.median,
    p99Ms: chain.p99,
    baselineMedianMs: flat.median,
    baselineP99Ms: flat.p99,
    ...done(),
  });
}

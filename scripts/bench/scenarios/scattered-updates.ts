import { foldMember } from "../../../src/features/membership/rules/filter.ts";
import type { Client } from "../http.ts";
import { timed } from "../raw.ts";
import { summarize } from "../stats.ts";
import { bigId, range } from "./member-ids.ts";
import { thousands } from "./result-rows.ts";
import { type Context, checkTime, measure } from "./scenario-context.ts";

const RULE_AUDIENCES = 100;
const UPDATED = 1_000;

/** Audience i's rule: one region, or a tier within a region prefix; the updates move members in and out. */
export const ruleOf = (i: number) =>
  i < RULE_AUDIENCES / 2
    ? { field: "fields.region", op: "eq", value: `r${i % 50}` }
    : {
        all: [
          { field: "fields.tier", op: "eq", value: `t${i % 5}` },
          { field: "fields.region", op: "startsWith", value: `r${i % 4}` },
        ],
      };

/** New data for member n in round `round`: a region and a tier that change from round to round. */
const dataOf = (n: number, round: number) => ({ region: `r${(n + round * 7) % 50}`, tier: `t${(n + round) % 5}` });

/**
 * The raw baseline: one UPDATE of the same members' data (fields and their folded form) in the
 * raw database's workspace of the same size, without any rule to follow.
 */
async function rawUpdate(ctx: Context, numbers: number[], round: number): Promise<number> {
  const rows = numbers.map((n) => {
    const id = bigId(n);
    const fields = dataOf(n, round);
    return { id, fields, folded: foldMember({ id, email: null, fields, alternativeEmails: [] }) };
  });
  return timed(() =>
    ctx.raw.query(
      `UPDATE members AS m SET fields = v.fields, folded = v.folded, updated_at = now()
       FROM jsonb_to_recordset($2::jsonb) AS v(id text, fields jsonb, folded jsonb)
       WHERE m.workspace_id = $1 AND m.id = v.id`,
      [ctx.workspaceId, JSON.stringify(rows)],
    ),
  );
}

async function upsert(api: Client, workspaceId: string, numbers: number[], round: number): Promise<number> {
  const members = numbers.map((n) => ({ id: bigId(n), fields: dataOf(n, round) }));
  return (await api.call("POST", `/v0/workspaces/${workspaceId}/members`, { members }, 200)).ms;
}

/**
 * Scenario: member data changes in a workspace of `size` members with 100 rule-based audiences
 * (a CRM sync): 1,000 members spread over the workspace, 1,000 consecutive ones, and single
 * members changed with PATCH; each beside the raw UPDATE of the same rows.
 */
export async function scatteredUpdates(ctx: Context): Promise<void> {
  const { size, batch } = ctx.opts;
  const { body: workspace } = await ctx.admin.call<{ id: string }>(
    "POST",
    "/v0/workspaces",
    { name: "Bench rules" },
    201,
  );
  const keyPath = `/v0/workspaces/${workspace.id}/api-keys`;
  const { body: key } = await ctx.admin.call<{ key: string }>("POST", keyPath, { name: "rules" }, 201);
  const api = ctx.clientFor(key.key);
  const base = `/v0/workspaces/${workspace.id}`;
  ctx.log(`scattered updates: ${RULE_AUDIENCES} rule audiences, then ${thousands(size)} members`);
  for (let i = 0; i < RULE_AUDIENCES; i++) {
    const { body } = await api.call<{ id: string }>("POST", `${base}/audiences`, { name: `Rule ${i}` }, 201);
    await api.call("PUT", `${base}/audiences/${body.id}/filter`, { filter: ruleOf(i) }, 200);
  }
  const { body: all } = await api.call<{ id: string }>("POST", `${base}/audiences`, { name: "All" }, 201);
  for (let b = 0; b < size / batch; b++) {
    checkTime(ctx);
    await api.call(
      "POST",
      `${base}/audiences/${all.id}/members`,
      { memberIds: range(b * batch, (b + 1) * batch, bigId) },
      200,
    );
  }
  const rounds = ctx.opts.quick ? 3 : 10;
  const stride = Math.floor(size / UPDATED);
  const shapes = [
    {
      metric: "update_spread",
      label: "spread over the workspace",
      numbers: (r: number) => range(0, UPDATED, (i) => i * stride + (r % stride)),
    },
    {
      metric: "update_consecutive",
      label: "consecutive",
      numbers: (r: number) => range(0, UPDATED, (i) => (r * UPDATED + i) % size),
    },
  ];
  for (const shape of shapes) {
    const rawMs: number[] = [];
    const serviceMs: number[] = [];
    const done = measure(ctx);
    for (let round = 1; round <= rounds; round++) {
      checkTime(ctx);
      const numbers = shape.numbers(round);
      rawMs.push(await rawUpdate(ctx, numbers, round));
      serviceMs.push(await upsert(api, workspace.id, numbers, round));
    }
    const service = summarize(serviceMs);
    const raw = summarize(rawMs);
    ctx.rows.push({
      metric: shape.metric,
      label: `upsert ${thousands(UPDATED)} changed members ${shape.label}, ${RULE_AUDIENCES} rule audiences: p50`,
      unit: "ms",
      value: service.median,
      baseline: raw.median,
      baselineLabel: "UPDATE of the same rows, p50",
      ratio: service.median / raw.median,
      target: shape.metric === "update_spread" ? "update_spread" : undefined,
      medianMs: service.median,
      p99Ms: service.p99,
      baselineMedianMs: raw.median,
      baselineP99Ms: raw.p99,
      ...done(),
    });
  }
  // One member at a time, as an app editing a profile does.
  const rawMs: number[] = [];
  const serviceMs: number[] = [];
  for (let i = 0; i < (ctx.opts.quick ? 20 : 200); i++) {
    const n = (i * 7_919) % size;
    rawMs.push(await rawUpdate(ctx, [n], 100 + i));
    const patch = { fields: dataOf(n, 100 + i) };
    serviceMs.push((await api.call("PATCH", `${base}/members/${encodeURIComponent(bigId(n))}`, patch, 200)).ms);
  }
  const service = summarize(serviceMs);
  const raw = summarize(rawMs);
  ctx.rows.push({
    metric: "patch_member_with_rules",
    label: `PATCH one member, ${RULE_AUDIENCES} rule audiences, ${thousands(size)} members: p50 (p99 ${service.p99.toFixed(1)} ms)`,
    unit: "ms",
    value: service.median,
    baseline: raw.median,
    baselineLabel: "UPDATE of the row, p50",
    ratio: service.median / raw.median,
    target: "patch_member_with_rules",
    medianMs: service.median,
    p99Ms: service.p99,
  });
}

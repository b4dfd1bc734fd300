import { type RawDb, timed } from "../raw.ts";
import { summarize } from "../stats.ts";
import { latencyRow, secondsRow, thousands } from "./result-rows.ts";
import { type Context, checkTime, eventsPublished, measure, type StoreWriter } from "./scenario-context.ts";

/** Rounds of each full-workspace evaluation (dry run, previews), interleaved: the p50 is kept. */
const ROUNDS = 5;

/**
 * Members 1 … count with five fields: company (10 values), role (5), country (8), a score
 * (0.0 … 99.9, as numeric-rule.ts's) and a plan (3 values, absent for one member in 7).
 */
async function fillMembers(db: RawDb, workspaceId: string, count: number): Promise<void> {
  await db.query(
    `INSERT INTO members (workspace_id, id, seq, created_at, fields, folded)
     SELECT $1, 'ri' || n, n, timestamp '2026-01-01' + n * interval '1 millisecond', f,
            jsonb_build_object('id', 'ri' || n, 'email', null, 'emails', '[]'::jsonb, 'fields', f)
     FROM (SELECT n, jsonb_strip_nulls(jsonb_build_object(
             'company', 'co' || (n * 31) % 10,
             'role', 'r' || (n * 17) % 5,
             'country', (ARRAY['de', 'fr', 'it', 'uk', 'us', 'es', 'nl', 'pl'])[(n * 13) % 8 + 1],
             'score', ((n::int8 * 7919) % 1000 / 10) || '.' || ((n::int8 * 7919) % 10),
             'plan', CASE WHEN n % 7 = 0 THEN NULL ELSE 'p' || n % 3 END)) AS f
           FROM generate_series(1, $2::int) AS n) AS s`,
    [workspaceId, count],
  );
  await db.query(`UPDATE workspaces SET member_seq = $2 WHERE workspace_id = $1`, [workspaceId, count]);
}

/** The audience's rule before the dry run: one condition, a tenth of the workspace. */
const BEFORE = { field: "fields.company", op: "eq", value: "co1" };
/**
 * A rule of 10 conditions (two of them under an `any`), about a sixth of the workspace; the filter
 * cost bound's unit test holds the default budget to accepting it at a million members.
 */
export const RULE = {
  all: [
    { field: "fields.company", op: "ne", value: "co3" },
    { field: "fields.role", op: "notIn", value: ["r1"] },
    { field: "fields.score", op: "gt", value: "20" },
    { field: "fields.plan", op: "exists" },
    {
      any: [
        { field: "fields.country", op: "in", value: ["de", "fr"] },
        { field: "fields.country", op: "startsWith", value: "u" },
      ],
    },
    { field: "fields.score", op: "lt", value: "95" },
    { field: "fields.company", op: "notIn", value: ["co7", "co8"] },
    { field: "fields.role", op: "ne", value: "r4" },
    { field: "fields.plan", op: "ne", value: "p2" },
  ],
};
/** Its nodes: the root, 8 conditions and the `any` with its 2. */
const NODES = 12;

/**
 * Scenario (issue 31): a dry run of a 10-condition rule on an audience of `size` members
 * (its rule before: one condition) beside the preview of the same rule; the preview with
 * nodeCounts beside it without; then the rule saved and a member's explanation read.
 */
export async function insightRules(ctx: Context, writeServiceStore: StoreWriter): Promise<void> {
  const count = ctx.opts.size;
  const { body: workspace } = await ctx.admin.call<{ id: string }>(
    "POST",
    "/v0/workspaces",
    { name: "Bench insight rules" },
    201,
  );
  const keyPath = `/v0/workspaces/${workspace.id}/api-keys`;
  const { body: key } = await ctx.admin.call<{ key: string }>("POST", keyPath, { name: "rules" }, 201);
  ctx.log(`insight rules: writing ${thousands(count)} members with 5 fields into the service's store`);
  await ctx.raw.query(`INSERT INTO workspaces (workspace_id, name) VALUES ($1, 'bench rules')`, [workspace.id]);
  await fillMembers(ctx.raw, workspace.id, Math.min(count, 1_000));
  await writeServiceStore((db) => fillMembers(db, workspace.id, count));
  await ctx.analyze();
  const api = ctx.clientFor(key.key);
  const base = `/v0/workspaces/${workspace.id}`;
  await api.call("PUT", `${base}/fields/score`, { type: "number" }, 200);
  const { body: audience } = await api.call<{ id: string }>("POST", `${base}/audiences`, { name: "Ruled" }, 201);
  const ruled = `${base}/audiences/${audience.id}`;
  await api.call("PUT", `${ruled}/filter`, { filter: BEFORE }, 200);
  await eventsPublished(ctx, workspace.id, api);

  // The dry run beside the preview, then the preview with nodeCounts beside it without: each pair
  // alternates, so that both see the same load.
  const preview = (nodeCounts: boolean) =>
    api.call<{ totalCount: number; nodes?: { count: number }[] }>(
      "POST",
      `${base}/audiences/preview`,
      { filter: RULE, limit: 10, ...(nodeCounts ? { nodeCounts } : {}) },
      200,
    );
  const dryMs: number[] = [];
  const previewMs: number[] = [];
  let done = measure(ctx);
  let matching = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    checkTime(ctx);
    ctx.log(`insight rules ${round}/${ROUNDS}: preview, then the dry run`);
    const p = await preview(false);
    matching = p.body.totalCount;
    const dry = await api.call<{ memberCount: number }>("POST", `${ruled}/filter/preview`, { filter: RULE }, 200);
    if (dry.body.memberCount !== matching) {
      throw new Error(`dry run: ${dry.body.memberCount} members, the preview ${matching}`);
    }
    previewMs.push(p.ms);
    dryMs.push(dry.ms);
  }
  const share = `${((100 * matching) / count).toFixed(1)}% match`;
  ctx.rows.push({
    ...secondsRow(summarize(dryMs).median, summarize(previewMs).median, {
      metric: "insight_dry_run",
      target: "insight_dry_run",
      label: `dry run of a 10-condition rule (${share}) on an audience of ${thousands(count)} members: p50 of ${ROUNDS}`,
      baselineLabel: "POST …/audiences/preview of the same rule, p50",
    }),
    ...done(),
  });

  const countedMs: number[] = [];
  const plainMs: number[] = [];
  done = measure(ctx);
  for (let round = 1; round <= ROUNDS; round++) {
    checkTime(ctx);
    ctx.log(`insight rules ${round}/${ROUNDS}: preview, then with nodeCounts`);
    const p = await preview(false);
    const counted = await preview(true);
    const nodes = counted.body.nodes ?? [];
    if (nodes.length !== NODES || nodes[0]?.count !== p.body.totalCount) {
      throw new Error(`nodeCounts: ${nodes.length} nodes, the root ${nodes[0]?.count} of ${p.body.totalCount}`);
    }
    plainMs.push(p.ms);
    countedMs.push(counted.ms);
  }
  ctx.rows.push({
    ...secondsRow(summarize(countedMs).median, summarize(plainMs).median, {
      metric: "insight_node_counts",
      target: "insight_node_counts",
      label: `preview with nodeCounts, the same rule (${NODES} nodes), ${thousands(count)} members: p50 of ${ROUNDS}`,
      baselineLabel: "the same preview without nodeCounts, p50",
    }),
    ...done(),
  });

  // The explanation of members of the audience under the 10-condition rule, once saved.
  await api.call("PUT", `${ruled}/filter`, { filter: RULE }, 200);
  await eventsPublished(ctx, workspace.id, api);
  done = measure(ctx);
  const serviceMs: number[] = [];
  const rawMs: number[] = [];
  const samples = ctx.opts.pageWarmup + ctx.opts.pageSamples;
  for (let i = 0; i < samples; i++) {
    checkTime(ctx);
    const memberId = `ri${(i % 1_000) + 1}`;
    const raw = await timed(() =>
      ctx.raw.query(`SELECT id, seq, created_at, folded FROM members WHERE workspace_id = $1 AND id = $2`, [
        workspace.id,
        memberId,
      ]),
    );
    const res = await api.call<{ rule: { nodes: unknown[] } | null }>(
      "GET",
      `${ruled}/members/${memberId}/explanation`,
      undefined,
      200,
    );
    if (res.body.rule?.nodes.length !== NODES) throw new Error(`explanation: ${res.body.rule?.nodes.length} nodes`);
    if (i >= ctx.opts.pageWarmup) {
      rawMs.push(raw);
      serviceMs.push(res.ms);
    }
  }
  ctx.rows.push({
    ...latencyRow(serviceMs, rawMs, {
      metric: "insight_explanation",
      target: "insight_explanation",
      label: (p99) => `explanation of a member under the 10-condition rule: p50 (p99 ${p99.toFixed(1)} ms)`,
      baseline: "the member's row by key,",
    }),
    ...done(),
  });
}

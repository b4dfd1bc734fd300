import { NUMBER_PATTERN } from "../../../src/domain/field-types.ts";
import { chunks, type RawDb, timed } from "../raw.ts";
import { summarize } from "../stats.ts";
import { secondsRow, thousands } from "./result-rows.ts";
import { type Context, checkTime, measure, type StoreWriter } from "./scenario-context.ts";

/** Rounds of the rule set (each on a new audience), beside as many raw statements: the p50 is kept. */
const ROUNDS = 3;
/** Member n's score is k / 10 for k = (n × 7,919) mod 1,000: 0.0 … 99.9, every value once per 1,000 members. */
const scoreKey = (n: number) => (n * 7_919) % 1_000;
/** The rule measured, and how many of the members 1 … count it keeps (score > 50.0: k > 500). */
const RULE = { field: "fields.score", op: "gt", value: "50" };
const matching = (count: number) => {
  let n = 0;
  for (let i = 1; i <= count; i++) if (scoreKey(i) > 500) n++;
  return n;
};

/** Members 1 … count with a `score` field (text, as every field value), written in one statement. */
async function fillMembers(db: RawDb, workspaceId: string, count: number): Promise<void> {
  await db.query(
    `INSERT INTO members (workspace_id, id, seq, created_at, fields, folded)
     SELECT $1, 'sc' || n, n, timestamp '2026-01-01' + n * interval '1 millisecond', f,
            jsonb_build_object('id', 'sc' || n, 'email', null, 'emails', '[]'::jsonb, 'fields', f)
     FROM (SELECT n, jsonb_build_object('score', (k / 10) || '.' || (k % 10)) AS f
           FROM (SELECT n, (n::int8 * 7919) % 1000 AS k FROM generate_series(1, $2::int) AS n) AS s) AS s`,
    [workspaceId, count],
  );
  await db.query(`UPDATE workspaces SET member_seq = $2 WHERE workspace_id = $1`, [workspaceId, count]);
}

/**
 * The raw statement: the same scan of the workspace's members and the same aggregation of the
 * matches into bitset chunks as the service's recompute (membership-repo.ts), read as a count
 * instead of written. The score is cast as a hand-written query would (the service first checks
 * the text against the number pattern: see the declare row's baseline).
 */
const rawMatch = (db: RawDb, workspaceId: string) =>
  db.query<{ chunks: number; members: number }>(
    `SELECT count(*)::int AS chunks, sum(bit_count(r.bits))::int AS members FROM ${chunks(
      `SELECT m.seq FROM members AS m WHERE m.workspace_id = $1 AND (m.folded->'fields'->>'score')::float8 > $2::float8`,
    )} AS r`,
    [workspaceId, RULE.value],
  );

/**
 * Scenario: a `number` field declared over `size` members with a score, then a numeric rule
 * (score > 50) set on new audiences, each beside the raw statement doing the same scan.
 */
export async function numericRule(ctx: Context, writeServiceStore: StoreWriter): Promise<void> {
  const count = ctx.opts.size;
  const { body: workspace } = await ctx.admin.call<{ id: string }>(
    "POST",
    "/v0/workspaces",
    { name: "Bench numeric" },
    201,
  );
  const keyPath = `/v0/workspaces/${workspace.id}/api-keys`;
  const { body: key } = await ctx.admin.call<{ key: string }>("POST", keyPath, { name: "numeric" }, 201);
  ctx.log(`numeric rule: writing ${thousands(count)} members with a score into both stores`);
  await ctx.raw.query(`INSERT INTO workspaces (workspace_id, name) VALUES ($1, 'bench numeric')`, [workspace.id]);
  await fillMembers(ctx.raw, workspace.id, count);
  await writeServiceStore((db) => fillMembers(db, workspace.id, count));
  await ctx.analyze();
  const api = ctx.clientFor(key.key);
  const base = `/v0/workspaces/${workspace.id}`;

  // Declaring the type checks every stored value; the baseline is that check's scan alone.
  const rawCheckMs = await timed(() =>
    ctx.raw.query(
      `SELECT count(*) FROM members AS m WHERE m.workspace_id = $1 AND m.fields ? 'score'
         AND NOT (m.fields->>'score') ~ $2`,
      [workspace.id, NUMBER_PATTERN],
    ),
  );
  const declared = measure(ctx);
  const declare = await api.call("PUT", `${base}/fields/score`, { type: "number" }, 200);
  ctx.rows.push({
    ...secondsRow(declare.ms, rawCheckMs, {
      metric: "declare_number_field",
      label: `declare score a number, ${thousands(count)} members with a score`,
      baselineLabel: "one SELECT of the values not matching the number pattern",
    }),
    ...declared(),
  });

  const expected = matching(count);
  const rawMs: number[] = [];
  const serviceMs: number[] = [];
  const done = measure(ctx);
  for (let round = 1; round <= ROUNDS; round++) {
    checkTime(ctx);
    ctx.log(`numeric rule ${round}/${ROUNDS}: raw scan into chunks, then PUT …/filter`);
    rawMs.push(await timed(() => rawMatch(ctx.raw, workspace.id)));
    const { body: audience } = await api.call<{ id: string }>(
      "POST",
      `${base}/audiences`,
      { name: `By score ${round}` },
      201,
    );
    const res = await api.call<{ memberCount: number }>(
      "PUT",
      `${base}/audiences/${audience.id}/filter`,
      { filter: RULE },
      200,
    );
    if (res.body.memberCount !== expected) {
      throw new Error(`numeric rule: expected ${expected} members, got ${res.body.memberCount}`);
    }
    serviceMs.push(res.ms);
  }
  const service = summarize(serviceMs).median;
  const raw = summarize(rawMs).median;
  ctx.rows.push({
    ...secondsRow(service, raw, {
      metric: "numeric_rule_set",
      target: "numeric_rule",
      label: `set a rule score > 50 (number field; ${((100 * expected) / count).toFixed(1)}% match), ${thousands(count)} members: p50 of ${ROUNDS}`,
      baselineLabel: "the same scan into chunks, one SELECT without the writes, p50",
    }),
    ...done(),
  });
}

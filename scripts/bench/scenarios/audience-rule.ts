import { CHUNK_BITS } from "../../../src/features/membership/member-bits-sql.ts";
import { kinds, type RawDb, rawSql, stored, timed } from "../raw.ts";
import { summarize } from "../stats.ts";
import { bigId, range } from "./member-ids.ts";
import { secondsRow, thousands } from "./result-rows.ts";
import { type Context, checkTime, createAudience, eventsPublished, measure, ws } from "./scenario-context.ts";

/** Rounds of the rule set (each on a new audience), beside as many raw statements: the p50 is kept. */
const ROUNDS = 3;
const NO_BITS = `B'0'::bit(${CHUNK_BITS})`;

/** SQL: A's member chunks less B's ($2 and $3 of workspace $1), chunk by chunk, as rows (chunk, bits). */
const difference = `
  SELECT a.chunk, ${stored("a")} & ~coalesce(${stored("b")}, ${NO_BITS}) AS bits FROM membership_chunks AS a
  LEFT JOIN membership_chunks AS b ON b.workspace_id = a.workspace_id AND b.audience_id = $3
    AND b.kind = ${kinds("member")} AND b.chunk = a.chunk
  WHERE a.workspace_id = $1 AND a.audience_id = $2 AND a.kind = ${kinds("member")}`;

/** The raw statement: the bit arithmetic over the two audiences' chunks, read as a count. */
const rawDifference = (db: RawDb, workspaceId: string, a: string, b: string) =>
  db.query(`SELECT count(*) AS chunks, sum(bit_count(d.bits)) AS members FROM (${difference}) AS d`, [
    workspaceId,
    a,
    b,
  ]);

/** The same, written as a new audience's match and member chunks ($4): what a rule set must write. */
const rawDifferenceWritten = (db: RawDb, workspaceId: string, a: string, b: string, target: string) => {
  const put = (kind: "match" | "member") => `
    INSERT INTO membership_chunks (workspace_id, audience_id, kind, chunk, bits, count)
    SELECT $1, $4, ${kinds(kind)}, r.chunk, r.bits, bit_count(r.bits) FROM r WHERE r.bits <> ${NO_BITS}`;
  return db.query(`WITH r AS MATERIALIZED (${difference}), m AS (${put("match")}) ${put("member")}`, [
    workspaceId,
    a,
    b,
    target,
  ]);
};

/**
 * Scenario: two audiences of size/2 members of the big workspace, overlapping by half (A holds
 * the first half, B the middle half), then the rule `in A ∧ notIn B` set on new audiences, each
 * beside the raw bit arithmetic of A's and B's chunks.
 */
export async function audienceRule(ctx: Context): Promise<void> {
  const { size, batch } = ctx.opts;
  const half = size / 2;
  const a = await createAudience(ctx, "Bench: rule source A");
  const b = await createAudience(ctx, "Bench: rule source B");
  const sources = [
    { audienceId: a, from: 0, to: half },
    { audienceId: b, from: size / 4, to: size / 4 + half },
  ];
  ctx.log(`audience rule: filling two audiences of ${thousands(half)} existing members in both stores`);
  for (const { audienceId, ...source } of sources) {
    for (let from = source.from; from < source.to; from += batch) {
      checkTime(ctx);
      const memberIds = range(from, Math.min(source.to, from + batch), bigId);
      await rawSql.includeExisting(ctx.raw, ctx.workspaceId, audienceId, memberIds);
      await ctx.api.call("POST", `${ws(ctx)}/audiences/${audienceId}/members`, { memberIds }, 200);
    }
  }
  // As autovacuum would after a million rows: on tables never analyzed (an --only run), the rule
  // took 10 s instead of about 1.5 s.
  await ctx.analyze();
  await eventsPublished(ctx);
  const filter = {
    all: [
      { field: "audience", op: "in", value: a },
      { field: "audience", op: "notIn", value: b },
    ],
  };
  const expected = size / 4;
  const rawMs: number[] = [];
  const serviceMs: number[] = [];
  const done = measure(ctx);
  for (let round = 1; round <= ROUNDS; round++) {
    checkTime(ctx);
    ctx.log(`audience rule ${round}/${ROUNDS}: raw A & ~B over chunks, then PUT …/filter`);
    rawMs.push(await timed(() => rawDifference(ctx.raw, ctx.workspaceId, a, b)));
    const { body: audience } = await ctx.api.call<{ id: string }>(
      "POST",
      `${ws(ctx)}/audiences`,
      { name: `Bench: in A, not in B ${round}` },
      201,
    );
    const res = await ctx.api.call<{ memberCount: number }>(
      "PUT",
      `${ws(ctx)}/audiences/${audience.id}/filter`,
      { filter },
      200,
    );
    if (res.body.memberCount !== expected) {
      throw new Error(`audience rule: expected ${expected} members, got ${res.body.memberCount}`);
    }
    serviceMs.push(res.ms);
    await eventsPublished(ctx);
  }
  const used = done();
  const service = summarize(serviceMs).median;
  const raw = summarize(rawMs).median;
  ctx.rows.push({
    ...secondsRow(service, raw, {
      metric: "audience_rule_set",
      target: "audience_rule",
      label: `set a rule in A ∧ notIn B, two ${thousands(half)}-member audiences (50% overlap): p50 of ${ROUNDS}`,
      baselineLabel: "one SELECT of A's chunks & ~B's, p50",
    }),
    ...used,
  });
  // What the same arithmetic costs written as the audience's sets: the floor of a rule set by chunks.
  const rawTarget = "aud_rawAudienceRule000";
  await rawSql.audience(ctx.raw, ctx.workspaceId, rawTarget, "Bench: in A, not in B (raw)");
  const writtenMs = await timed(() => rawDifferenceWritten(ctx.raw, ctx.workspaceId, a, b, rawTarget));
  ctx.rows.push(
    secondsRow(service, writtenMs, {
      metric: "audience_rule_set_vs_written",
      target: "audience_rule_written",
      label: "the same rule set, beside the chunk arithmetic written as match and member chunks",
      baselineLabel: "one INSERT … SELECT of A's chunks & ~B's, twice",
    }),
  );
}

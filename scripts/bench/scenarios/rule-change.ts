import { rawSql, timed } from "../raw.ts";
import { secondsRow, thousands } from "./result-rows.ts";
import { type Context, checkTime, createAudience, measure, ws } from "./scenario-context.ts";

const suffixRule = (digits: string[]) => ({
  any: digits.map((value) => ({ field: "id", op: "endsWith", value })),
});
/** How many of the ids 0 … size-1 end with one of the digits. */
const countEndingIn = (size: number, digits: string[]) =>
  digits.map(Number).reduce((total, d) => total + (size > d ? Math.floor((size - 1 - d) / 10) + 1 : 0), 0);

/**
 * Scenario: set, then change, the rule of an audience of the big workspace; each recomputes the
 * audience over every member.
 */
export async function ruleChange(ctx: Context): Promise<void> {
  const { size } = ctx.opts;
  const steps = [
    { metric: "filter_set", label: "set a rule (none → 50% match)", digits: ["0", "1", "2", "3", "4"] },
    { metric: "filter_change", label: "change the rule (30% leave, 30% join)", digits: ["3", "4", "5", "6", "7"] },
  ];
  const audienceId = await createAudience(ctx, "Bench: by rule");
  for (const step of steps) {
    checkTime(ctx);
    ctx.log(`${step.metric}: raw recompute over ${size} members, then PUT …/filter`);
    const rawMs = await timed(() => rawSql.recomputeBySuffix(ctx.raw, ctx.workspaceId, audienceId, step.digits));
    const done = measure(ctx);
    const res = await ctx.api.call<{ memberCount: number }>(
      "PUT",
      `${ws(ctx)}/audiences/${audienceId}/filter`,
      { filter: suffixRule(step.digits) },
      200,
    );
    const used = done();
    const expected = countEndingIn(size, step.digits);
    if (res.body.memberCount !== expected) {
      throw new Error(`${step.metric}: expected ${expected} members, got ${res.body.memberCount}`);
    }
    ctx.rows.push({
      ...secondsRow(res.ms, rawMs, {
        metric: step.metric,
        target: "filter_recompute",
        label: `${step.label}, ${thousands(size)}-member workspace`,
        baselineLabel: "one statement: scan, chunks, upsert",
      }),
      ...used,
    });
  }
}

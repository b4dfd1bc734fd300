import { fold } from "../../../src/features/membership/rules/filter.ts";
import { rawSql, timed } from "../raw.ts";
import { bigId, range } from "./member-ids.ts";
import { rateRow, thousands } from "./result-rows.ts";
import { type Context, checkTime, createAudience, measure, ws } from "./scenario-context.ts";

/**
 * Scenario: `size` new members (1,000,000 by default) into one audience, by id, `batch` per request.
 * Resolves to that audience: the seeded workspace later scenarios build on.
 */
export async function bulkAddNew(ctx: Context): Promise<string> {
  const { size, batch } = ctx.opts;
  const audienceId = await createAudience(ctx, "Bench: everyone");
  const batches = size / batch;
  ctx.log(`bulk add: ${batches} × (raw unnest insert, POST …/members) of ${batch} new ids`);
  const rawMs: number[] = [];
  const serviceMs: number[] = [];
  const done = measure(ctx);
  for (let b = 0; b < batches; b++) {
    checkTime(ctx);
    const ids = range(b * batch, (b + 1) * batch, bigId);
    const folded = ids.map(fold);
    rawMs.push(await timed(() => rawSql.addNewMembers(ctx.raw, ctx.workspaceId, audienceId, ids, folded)));
    const res = await ctx.api.call<{ added: number; created: number }>(
      "POST",
      `${ws(ctx)}/audiences/${audienceId}/members`,
      { memberIds: ids },
      200,
    );
    if (res.body.added !== batch || res.body.created !== batch) {
      throw new Error(`bulk add: expected ${batch} added and created, got ${JSON.stringify(res.body)}`);
    }
    serviceMs.push(res.ms);
  }
  ctx.rows.push({
    ...rateRow(size, serviceMs, rawMs, {
      metric: "bulk_add_new_ids",
      label: `bulk add ${thousands(size)} new ids (${thousands(batch)}/request)`,
      baselineLabel: "unnest INSERT",
      target: "bulk_add_new_ids",
    }),
    ...done(),
  });
  return audienceId;
}

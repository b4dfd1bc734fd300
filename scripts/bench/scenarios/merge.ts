import { rawSql, timed } from "../raw.ts";
import { bigId, range } from "./member-ids.ts";
import { rateRow, secondsRow, thousands } from "./result-rows.ts";
import { type Context, checkTime, createAudience, measure, ws } from "./scenario-context.ts";

/** Scenario: merge two audiences of size/2 members each, overlapping by half. */
export async function mergeAudiences(ctx: Context): Promise<void> {
  const { size, batch } = ctx.opts;
  const half = size / 2;
  const sources = [
    { name: "Bench: merge source 1", from: 0, to: half },
    { name: "Bench: merge source 2", from: size / 4, to: size / 4 + half },
  ];
  const ids: string[] = [];
  for (const source of sources) ids.push(await createAudience(ctx, source.name));
  ctx.log(`merge: filling two audiences of ${half} existing members (raw insert, POST …/members)`);
  const rawMs: number[] = [];
  const serviceMs: number[] = [];
  const fill = measure(ctx);
  for (const [i, source] of sources.entries()) {
    const audienceId = ids[i] as string;
    for (let from = source.from; from < source.to; from += batch) {
      checkTime(ctx);
      const memberIds = range(from, Math.min(source.to, from + batch), bigId);
      rawMs.push(await timed(() => rawSql.includeExisting(ctx.raw, ctx.workspaceId, audienceId, memberIds)));
      const res = await ctx.api.call<{ added: number; created: number }>(
        "POST",
        `${ws(ctx)}/audiences/${audienceId}/members`,
        { memberIds },
        200,
      );
      if (res.body.added !== memberIds.length || res.body.created !== 0) {
        throw new Error(`merge fill: unexpected result ${JSON.stringify(res.body)}`);
      }
      serviceMs.push(res.ms);
    }
  }
  ctx.rows.push({
    ...rateRow(2 * half, serviceMs, rawMs, {
      metric: "bulk_add_existing_ids",
      label: `bulk add ${thousands(2 * half)} existing members (merge sources)`,
      baselineLabel: "unnest INSERT",
    }),
    ...fill(),
  });

  ctx.log("merge: raw union, then POST …/audiences/merge");
  const rawTarget = "aud_rawMergeTarget0000";
  await rawSql.audience(ctx.raw, ctx.workspaceId, rawTarget, "Bench: merged (raw)");
  const rawMergeMs = await timed(() => rawSql.union(ctx.raw, ctx.workspaceId, rawTarget, ids));
  const done = measure(ctx);
  const res = await ctx.api.call<{ id: string }>(
    "POST",
    `${ws(ctx)}/audiences/merge`,
    { name: "Bench: merged", audienceIds: ids },
    201,
  );
  const used = done();
  const expected = (3 * size) / 4;
  const page = await ctx.api.call<{ totalCount: number }>(
    "GET",
    `${ws(ctx)}/audiences/${res.body.id}/members?limit=1`,
    undefined,
    200,
  );
  if (page.body.totalCount !== expected) {
    throw new Error(`merge: expected ${expected} members, got ${page.body.totalCount}`);
  }
  ctx.rows.push({
    ...secondsRow(res.ms, rawMergeMs, {
      metric: "merge_audiences",
      target: "merge_audiences",
      label: `merge two ${thousands(half)}-member audiences (50% overlap)`,
      baselineLabel: "one INSERT … SELECT bit_or",
    }),
    ...used,
  });
}

import { rawSql, timed } from "../raw.ts";
import { secondsRow, thousands } from "./result-rows.ts";
import { type Context, measure, ws } from "./scenario-context.ts";

/** Scenario: a snapshot of the big audience (every member of the workspace). */
export async function snapshotAudience(ctx: Context, bigAudience: string): Promise<void> {
  const { size } = ctx.opts;
  ctx.log("snapshot: raw copy of the member chunks, then POST …/audiences/:id/snapshot");
  const rawTarget = "aud_rawSnapshotTarget0";
  await rawSql.audience(ctx.raw, ctx.workspaceId, rawTarget, "Bench: snapshot (raw)");
  const rawMs = await timed(() => rawSql.copyMembers(ctx.raw, ctx.workspaceId, rawTarget, bigAudience));
  const done = measure(ctx);
  const res = await ctx.api.call<{ id: string }>(
    "POST",
    `${ws(ctx)}/audiences/${bigAudience}/snapshot`,
    { name: "Bench: snapshot" },
    201,
  );
  const used = done();
  const page = await ctx.api.call<{ totalCount: number }>(
    "GET",
    `${ws(ctx)}/audiences/${res.body.id}/members?limit=1`,
    undefined,
    200,
  );
  if (page.body.totalCount !== size) {
    throw new Error(`snapshot: expected ${size} members, got ${page.body.totalCount}`);
  }
  ctx.rows.push({
    ...secondsRow(res.ms, rawMs, {
      metric: "snapshot_audience",
      target: "snapshot_audience",
      label: `snapshot a ${thousands(size)}-member audience`,
      baselineLabel: "one INSERT … SELECT of its member chunks",
    }),
    ...used,
  });
}

import { createClient } from "../http.ts";
import { rawSql, timed } from "../raw.ts";
import { rateRow, thousands } from "./result-rows.ts";
import { type Context, checkTime, type DataAudience, measure, ws } from "./scenario-context.ts";

/** Each export is measured this many times, alternating with its raw baseline. */
const RUNS = 3;

interface Exported {
  label: string;
  metric: string;
  workspaceId: string;
  audienceId: string;
  apiKey: string;
  members: number;
}

/**
 * Scenario: an audience's members as a CSV file (GET …/members with Accept: text/csv), read to
 * the end by the client, beside PostgreSQL's own COPY (SELECT …) TO STDOUT of the same columns in
 * the same order: the big audience of the bulk add (bare ids), and the audience of the bulk add
 * with data (e-mail and four fields).
 */
export async function exportMembers(ctx: Context, everyone: string, withData?: DataAudience): Promise<void> {
  const targets: Exported[] = [
    {
      label: "bare ids",
      metric: "export_csv_bare",
      workspaceId: ctx.workspaceId,
      audienceId: everyone,
      apiKey: ctx.apiKey,
      members: ctx.opts.size,
    },
  ];
  if (withData) targets.push({ label: "e-mail + 4 fields", metric: "export_csv_data", ...withData });
  await ctx.analyze();
  for (const target of targets) await exportCsv(ctx, target);
}

async function exportCsv(ctx: Context, target: Exported): Promise<void> {
  const api = target.apiKey === ctx.apiKey ? ctx.api : createClient(ctx.service.baseUrl, target.apiKey);
  const path = `${ws(ctx, target.workspaceId)}/audiences/${target.audienceId}/members`;
  ctx.log(
    `export: ${RUNS} × (raw COPY TO STDOUT, GET …/members as text/csv) of ${thousands(target.members)} ${target.label}`,
  );
  const rawMs: number[] = [];
  const serviceMs: number[] = [];
  const done = measure(ctx);
  let bytes = 0;
  try {
    for (let run = 0; run < RUNS; run++) {
      checkTime(ctx);
      rawMs.push(await timed(() => rawSql.exportCsv(ctx.raw, target.workspaceId, target.audienceId)));
      const res = await api.download(path, "text/csv");
      // A header and one line per member: no value of the benchmark's members holds a line break.
      if (res.status !== 200 || !res.type.startsWith("text/csv") || res.lines !== target.members + 1) {
        throw new Error(`export: ${res.status} ${res.type}, ${res.lines} lines for ${target.members} members`);
      }
      serviceMs.push(res.ms);
      bytes = res.bytes;
    }
  } finally {
    if (api !== ctx.api) api.close();
  }
  ctx.rows.push({
    ...rateRow(target.members * RUNS, serviceMs, rawMs, {
      metric: target.metric,
      label: `export ${thousands(target.members)} ${target.label} as CSV (${(bytes / 2 ** 20).toFixed(1)} MiB)`,
      baselineLabel: "COPY (SELECT …) TO STDOUT",
      target: "export_csv",
    }),
    ...done(),
  });
}

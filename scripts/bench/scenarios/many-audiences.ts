import { encodeCursor } from "../../../src/domain/cursor.ts";
import { type RawDb, timed } from "../raw.ts";
import { summarize } from "../stats.ts";
import { latencyRow, thousands } from "./result-rows.ts";
import { type Context, checkTime, measure } from "./scenario-context.ts";

/** Writes `count` audiences of the workspace, one statement: 1 ms apart, named like a product's. */
async function fillAudiences(db: RawDb, workspaceId: string, count: number): Promise<void> {
  await db.query(
    `INSERT INTO audiences (workspace_id, id, name, name_key, created_at)
     SELECT $1, 'aud_many' || lpad(n::text, 8, '0'), 'Segment ' || n, 'segment ' || n,
            timestamp '2026-01-01' + n * interval '1 millisecond'
     FROM generate_series(1, $2::int) AS n`,
    [workspaceId, count],
  );
}

/** The raw listing: the same columns, order and (with a position) keyset as the service's. */
function rawList(db: RawDb, workspaceId: string, page?: { after: { createdAt: Date; id: string } | null }) {
  const keyset = page?.after ? "AND (created_at, id) < ($2, $3)" : "";
  const limit = page ? "LIMIT 101" : "";
  const params: unknown[] = [workspaceId];
  if (page?.after) params.push(page.after.createdAt, page.after.id);
  return db.query(
    `SELECT id, name, is_archived, created_at FROM audiences
     WHERE workspace_id = $1 AND NOT is_archived ${keyset}
     ORDER BY created_at DESC, id DESC ${limit}`,
    params,
  );
}

/**
 * Scenario: a workspace with 10,000 audiences. listAudiences unpaged (every audience, as existing
 * clients ask) and a page of 100 at the start and in the middle (limit, after), each beside the
 * raw statement of the same columns.
 */
export async function manyAudiences(ctx: Context): Promise<void> {
  const count = ctx.opts.quick ? 2_000 : 10_000;
  const { body: workspace } = await ctx.admin.call<{ id: string }>(
    "POST",
    "/v0/workspaces",
    { name: "Bench many" },
    201,
  );
  const keyPath = `/v0/workspaces/${workspace.id}/api-keys`;
  const { body: key } = await ctx.admin.call<{ key: string }>("POST", keyPath, { name: "many" }, 201);
  ctx.log(`many audiences: writing ${thousands(count)} audiences into both stores`);
  await ctx.raw.query(`INSERT INTO workspaces (workspace_id, name) VALUES ($1, 'bench many')`, [workspace.id]);
  await fillAudiences(ctx.raw, workspace.id, count);
  await ctx.writeServiceStore((db) => fillAudiences(db, workspace.id, count));
  await ctx.analyze();
  const api = ctx.clientFor(key.key);
  const base = `/v0/workspaces/${workspace.id}/audiences`;
  const middle = {
    createdAt: new Date(Date.UTC(2026, 0, 1) + count / 2),
    id: `aud_many${String(count / 2).padStart(8, "0")}`,
  };
  const cases = [
    {
      scenario: "list_audiences_unpaged",
      label: `listAudiences, ${thousands(count)} audiences, unpaged`,
      path: base,
      expect: count,
      raw: () => rawList(ctx.raw, workspace.id),
    },
    {
      scenario: "list_audiences_first_page",
      label: "listAudiences, a page of 100 at the start",
      path: `${base}?limit=100`,
      expect: 100,
      raw: () => rawList(ctx.raw, workspace.id, { after: null }),
    },
    {
      scenario: "list_audiences_middle_page",
      label: "listAudiences, a page of 100 in the middle",
      path: `${base}?limit=100&after=${encodeCursor("audiences:DESC", middle)}`,
      expect: 100,
      raw: () => rawList(ctx.raw, workspace.id, { after: middle }),
    },
  ];
  for (const c of cases) {
    const rawMs: number[] = [];
    const serviceMs: number[] = [];
    const done = measure(ctx);
    for (let i = 0; i < ctx.opts.pageWarmup + ctx.opts.pageSamples; i++) {
      checkTime(ctx);
      const ms = await timed(c.raw);
      const res = await api.call<{ results: unknown[] }>("GET", c.path, undefined, 200);
      if (res.body.results.length !== c.expect) throw new Error(`${c.scenario}: ${res.body.results.length} audiences`);
      if (i >= ctx.opts.pageWarmup) {
        rawMs.push(ms);
        serviceMs.push(res.ms);
      }
    }
    ctx.rows.push({
      ...latencyRow(serviceMs, rawMs, {
        scenario: c.scenario,
        target: "≤ 1.5× raw",
        label: (p99) => `${c.label}: p50 (p99 ${p99.toFixed(1)} ms)`,
        pass: (p50) => p50 <= 1.5 * summarize(rawMs).median,
      }),
      ...done(),
    });
  }
}

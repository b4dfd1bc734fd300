import { encodeSequenceCursor } from "../../../src/domain/cursor.ts";
import { type RawDb, timed } from "../raw.ts";
import { latencyRow } from "./result-rows.ts";
import { type Context, checkTime, measure, type StoreWriter } from "./scenario-context.ts";

/**
 * The events a workspace's feed holds, written straight into a store: small membership changes,
 * one member each, as a busy workspace accumulates them. The same rows go to the service's store
 * and to the raw baseline's.
 */
async function fillFeed(db: RawDb, workspaceId: string, count: number): Promise<void> {
  await db.query(
    `INSERT INTO events (workspace_id, sequence, id, type, audience_id, data, created_at)
     SELECT $1, g, 'evt_' || lpad(g::text, 20, '0'), 'audience.members_changed', 'aud_bench_feed',
            jsonb_build_object('audienceId', 'aud_bench_feed', 'entered', jsonb_build_array('m' || g), 'left', '[]'::jsonb,
                               'reason', 'manual'),
            now() FROM generate_series(1, $2::int) AS g`,
    [workspaceId, count],
  );
  await db.query(
    `INSERT INTO event_heads (workspace_id, last_sequence) VALUES ($1, $2)
     ON CONFLICT (workspace_id) DO UPDATE SET last_sequence = EXCLUDED.last_sequence`,
    [workspaceId, count],
  );
}

/** The raw baseline: the same page as one keyset statement, built as JSON as the service builds it. */
function rawFeedPage(db: RawDb, workspaceId: string, after: number) {
  return db.query(
    `SELECT json_agg(json_build_object('id', p.id, 'type', p.type, 'sequence', p.sequence,
              'createdAt', to_char(p.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
              'data', p.data) ORDER BY p.sequence)::text AS page
     FROM (SELECT id, type, sequence, created_at, data FROM events
           WHERE workspace_id = $1 AND sequence > $2 ORDER BY sequence LIMIT 101) AS p`,
    [workspaceId, after],
  );
}

/**
 * Scenario: a page of 100 events of a feed that retains `events` events (1,000,000 at full size),
 * at its start, middle and end, beside the raw keyset statement.
 */
export async function feedPages(ctx: Context, writeServiceStore: StoreWriter): Promise<void> {
  const count = ctx.opts.quick ? 20_000 : 1_000_000;
  const { body: workspace } = await ctx.admin.call<{ id: string }>(
    "POST",
    "/v0/workspaces",
    { name: "Bench feed" },
    201,
  );
  const { body: key } = await ctx.admin.call<{ key: string }>(
    "POST",
    `/v0/workspaces/${workspace.id}/api-keys`,
    { name: "feed" },
    201,
  );
  ctx.log(`feed: writing ${count.toLocaleString("en-US")} events into both stores`);
  await ctx.raw.query(`INSERT INTO workspaces (workspace_id, name) VALUES ($1, 'bench feed')`, [workspace.id]);
  await fillFeed(ctx.raw, workspace.id, count);
  await writeServiceStore((db) => fillFeed(db, workspace.id, count));
  await ctx.analyze();
  const api = ctx.clientFor(key.key);
  for (const depth of [0, count / 2, count - 100]) {
    const label = depth >= 1_000 ? `${Math.round(depth / 1_000)}k` : String(depth);
    const path = `/v0/workspaces/${workspace.id}/events?limit=100&after=${encodeSequenceCursor(`events:${workspace.id}`, depth)}`;
    const rawMs: number[] = [];
    const serviceMs: number[] = [];
    const done = measure(ctx);
    for (let i = 0; i < ctx.opts.pageWarmup + ctx.opts.pageSamples; i++) {
      checkTime(ctx);
      const ms = await timed(() => rawFeedPage(ctx.raw, workspace.id, depth));
      const res = await api.call<{ results: { sequence: number }[] }>("GET", path, undefined, 200);
      if (res.body.results.length !== 100 || res.body.results[0]?.sequence !== depth + 1) {
        throw new Error(
          `feed page after ${depth}: ${res.body.results.length} events from ${res.body.results[0]?.sequence}`,
        );
      }
      if (i >= ctx.opts.pageWarmup) {
        rawMs.push(ms);
        serviceMs.push(res.ms);
      }
    }
    ctx.rows.push({
      ...latencyRow(serviceMs, rawMs, {
        metric: `feed_page_${label}`,
        label: (p99) =>
          `feed page of 100 after event ${label} of ${count.toLocaleString("en-US")}: p50 (p99 ${p99.toFixed(1)} ms)`,
        target: "feed_page",
      }),
      ...done(),
    });
  }
  api.close();
}

import { CHUNK_BITS, CHUNK_SHIFT } from "../../../src/features/membership/member-bits-sql.ts";
import { kinds, type RawDb, stored, timed } from "../raw.ts";
import { latencyRow, thousands } from "./result-rows.ts";
import { type Context, checkTime, measure, type StoreWriter } from "./scenario-context.ts";

/** Issue 31's overlap: the most audiences one request takes (all 190 pairs). */
const OVERLAPPING = 20;
/** Audiences older than the overlapping ones, so that a page of 100 holds both kinds. */
const OTHERS = 200;
/** Hours of size history written for one audience: every hour of 400 days, the retention. */
const HISTORY_HOURS = 400 * 24;
const overlapId = (n: number) => `aud_ovl${String(n).padStart(8, "0")}`;

/**
 * Audience n's members, as a pattern of 64 bits repeated over every chunk: its share of the
 * workspace rises with n (about 14% … 90%), so the pairs' intersections differ. A fixed
 * generator, so that both stores (and every run) hold the same bits.
 */
function patterns(count: number): string[] {
  let state = 31;
  const next = () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
  return Array.from({ length: count }, (_, i) => {
    const density = 0.1 + 0.04 * (i + 1);
    return Array.from({ length: 64 }, () => (next() < density ? "1" : "0")).join("");
  });
}

/**
 * The workspace's audiences: OTHERS empty ones, then the OVERLAPPING ones, whose member chunks
 * (and includes: they look filled by hand) cover member numbers 1 … members, with member_count
 * kept consistent; then a history of 400 days for the first two: every hour, every day. One statement each.
 */
async function fill(db: RawDb, workspaceId: string, members: number): Promise<void> {
  await db.query(
    `INSERT INTO audiences (workspace_id, id, name, name_key, created_at)
     SELECT $1, 'aud_oth' || lpad(n::text, 8, '0'), 'Other ' || n, 'other ' || n,
            timestamp '2026-01-01' + n * interval '1 millisecond'
     FROM generate_series(1, $2::int) AS n
     UNION ALL
     SELECT $1, 'aud_ovl' || lpad(n::text, 8, '0'), 'Overlap ' || n, 'overlap ' || n,
            timestamp '2026-02-01' + n * interval '1 millisecond'
     FROM generate_series(1, $3::int) AS n`,
    [workspaceId, OTHERS, OVERLAPPING],
  );
  // Bits lo … hi - 1 of chunk c stand for members: 1 … members (member number 0 is never used).
  await db.query(
    `INSERT INTO membership_chunks (workspace_id, audience_id, kind, chunk, bits, count)
     SELECT $1, 'aud_ovl' || lpad(a::text, 8, '0'), k.kind, c.chunk, b.bits, bit_count(b.bits)::int
     FROM generate_series(1, cardinality($2::text[])) AS a
     CROSS JOIN generate_series(0, $3::int >> ${CHUNK_SHIFT}) AS c(chunk)
     CROSS JOIN LATERAL (
       SELECT CASE WHEN c.chunk = 0 THEN 1 ELSE 0 END AS lo,
              least(${CHUNK_BITS}, $3::int - (c.chunk << ${CHUNK_SHIFT}) + 1) AS hi
     ) AS r
     CROSS JOIN LATERAL (
       SELECT CAST(repeat(($2::text[])[a], ${CHUNK_BITS / 64}) AS bit(${CHUNK_BITS}))
              & CAST(repeat('0', r.lo) || repeat('1', r.hi - r.lo) || repeat('0', ${CHUNK_BITS} - r.hi) AS bit(${CHUNK_BITS})) AS bits
     ) AS b
     CROSS JOIN (VALUES (${kinds("include")}), (${kinds("member")})) AS k(kind)`,
    [workspaceId, patterns(OVERLAPPING), members],
  );
  await db.query(
    `UPDATE audiences AS a SET member_count = t.count
     FROM (SELECT audience_id, sum(count)::int AS count FROM membership_chunks
           WHERE workspace_id = $1 AND kind = ${kinds("member")} GROUP BY audience_id) AS t
     WHERE a.workspace_id = $1 AND a.id = t.audience_id`,
    [workspaceId],
  );
  await db.query(
    `INSERT INTO audience_history (workspace_id, audience_id, hour, entered, "left", member_count)
     SELECT $1, $2, date_trunc('hour', now()) - h * interval '1 hour', (h * 7) % 50, (h * 3) % 20, 500000 + h
     FROM generate_series(0, $3::int - 1) AS h`,
    [workspaceId, overlapId(1), HISTORY_HOURS],
  );
  // The second: one change a day (at noon), 400 rows.
  await db.query(
    `INSERT INTO audience_history (workspace_id, audience_id, hour, entered, "left", member_count)
     SELECT $1, $2, date_trunc('day', now()) - d * interval '1 day' - interval '12 hours', d % 50, d % 20, 500000 + d
     FROM generate_series(0, 399) AS d`,
    [workspaceId, overlapId(2)],
  );
  // Their days, as the writes that made the hours would have written them.
  await db.query(
    `INSERT INTO audience_history_day (workspace_id, audience_id, day, entered, "left", member_count)
     SELECT workspace_id, audience_id, date_trunc('day', hour AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
            sum(entered)::int, sum("left")::int, (array_agg(member_count ORDER BY hour DESC))[1]
     FROM audience_history WHERE workspace_id = $1 GROUP BY 1, 2, 3`,
    [workspaceId],
  );
}

/** The raw overlap: bit_count(a & b) summed over the chunks both of every pair have. */
const rawOverlap = (db: RawDb, workspaceId: string, ids: string[]) =>
  db.query(
    `SELECT x.audience_id AS a, y.audience_id AS b, sum(bit_count(${stored("x")} & ${stored("y")}))::int AS count
     FROM membership_chunks AS x JOIN membership_chunks AS y
       ON y.workspace_id = x.workspace_id AND y.kind = x.kind AND y.chunk = x.chunk AND y.audience_id > x.audience_id
     WHERE x.workspace_id = $1 AND x.kind = ${kinds("member")}
       AND x.audience_id = ANY($2::text[]) AND y.audience_id = ANY($2::text[])
     GROUP BY 1, 2`,
    [workspaceId, ids],
  );

/** The raw history: the audience's hours of the range summed by UTC day, the day's last size. */
const rawHistory = (db: RawDb, workspaceId: string, audienceId: string, from: Date, to: Date) =>
  db.query(
    `SELECT date_trunc('day', hour AT TIME ZONE 'UTC') AS at,
            (array_agg(member_count ORDER BY hour DESC))[1] AS member_count,
            sum(entered)::int AS entered, sum("left")::int AS "left"
     FROM audience_history WHERE workspace_id = $1 AND audience_id = $2 AND hour >= $3 AND hour <= $4
     GROUP BY 1 ORDER BY 1`,
    [workspaceId, audienceId, from, to],
  );

/**
 * Scenario (issue 31): the overlap of 20 audiences over `size` members (all 190 pairs) beside the
 * raw bit arithmetic of the same chunks; an audience's history of 400 days by day, every hour
 * with a change, beside the raw aggregation; a page of 100 audiences with and without
 * include=stats. The rows are written straight into both stores.
 */
export async function insightSizes(ctx: Context, writeServiceStore: StoreWriter): Promise<void> {
  const members = ctx.opts.size;
  const { body: workspace } = await ctx.admin.call<{ id: string }>(
    "POST",
    "/v0/workspaces",
    { name: "Bench insight sizes" },
    201,
  );
  const keyPath = `/v0/workspaces/${workspace.id}/api-keys`;
  const { body: key } = await ctx.admin.call<{ key: string }>("POST", keyPath, { name: "sizes" }, 201);
  ctx.log(`insight sizes: ${OVERLAPPING} audiences over ${thousands(members)} members into both stores`);
  await ctx.raw.query(`INSERT INTO workspaces (workspace_id, name) VALUES ($1, 'bench sizes')`, [workspace.id]);
  await fill(ctx.raw, workspace.id, members);
  await writeServiceStore((db) => fill(db, workspace.id, members));
  await ctx.analyze();
  const api = ctx.clientFor(key.key);
  const base = `/v0/workspaces/${workspace.id}`;
  const ids = Array.from({ length: OVERLAPPING }, (_, i) => overlapId(i + 1));
  const samples = ctx.opts.pageWarmup + ctx.opts.pageSamples;

  const series = async (
    serviceCall: () => Promise<{ ms: number }>,
    rawCall: () => Promise<unknown>,
    n = samples,
    warmup = ctx.opts.pageWarmup,
  ) => {
    const serviceMs: number[] = [];
    const rawMs: number[] = [];
    for (let i = 0; i < n; i++) {
      checkTime(ctx);
      const raw = await timed(rawCall);
      const service = await serviceCall();
      if (i >= warmup) {
        rawMs.push(raw);
        serviceMs.push(service.ms);
      }
    }
    return { serviceMs, rawMs };
  };

  // The overlap: a few hundred milliseconds a request at full size, so fewer samples than a page.
  let done = measure(ctx);
  const overlapSamples = Math.min(samples, 30);
  const overlap = await series(
    async () => {
      const res = await api.call<{ pairs: unknown[] }>("POST", `${base}/audiences/overlap`, { audienceIds: ids }, 200);
      if (res.body.pairs.length !== (OVERLAPPING * (OVERLAPPING - 1)) / 2) throw new Error("overlap: pairs missing");
      return res;
    },
    () => rawOverlap(ctx.raw, workspace.id, ids),
    overlapSamples,
    Math.min(ctx.opts.pageWarmup, 3),
  );
  ctx.rows.push({
    ...latencyRow(overlap.serviceMs, overlap.rawMs, {
      metric: "insight_overlap",
      target: "insight_overlap",
      label: (p99) =>
        `overlap of ${OVERLAPPING} audiences (190 pairs), ${thousands(members)} members: p50 (p99 ${p99.toFixed(1)} ms)`,
      baseline: "one SELECT of bit_count(a & b) over the pairs' chunks,",
    }),
    ...done(),
  });

  // History: every hour of 400 days with a change (the target's case), and one change a day.
  const to = new Date();
  const from = new Date(to.getTime() - 400 * 86_400_000);
  const histories = [
    { audienceId: overlapId(1), rows: HISTORY_HOURS, metric: "insight_history", what: "a change every hour" },
    { audienceId: overlapId(2), rows: 400, metric: "insight_history_daily", what: "a change every day" },
  ];
  for (const h of histories) {
    done = measure(ctx);
    const history = await series(
      async () => {
        const res = await api.call<{ results: unknown[] }>(
          "GET",
          `${base}/audiences/${h.audienceId}/history?interval=day`,
          undefined,
          200,
        );
        if (res.body.results.length < 399) throw new Error(`history: ${res.body.results.length} days`);
        return res;
      },
      () => rawHistory(ctx.raw, workspace.id, h.audienceId, from, to),
    );
    ctx.rows.push({
      ...latencyRow(history.serviceMs, history.rawMs, {
        metric: h.metric,
        target: h.rows === HISTORY_HOURS ? "insight_history" : undefined,
        label: (p99) =>
          `history by day of 400 days, ${h.what} (${thousands(h.rows)} rows): p50 (p99 ${p99.toFixed(1)} ms)`,
        baseline: "one SELECT of the hours summed by day,",
      }),
      ...done(),
    });
  }

  // include=stats beside the same page without it, requests alternating.
  done = measure(ctx);
  const page = (query: string) => async () => {
    const res = await api.call<{ results: unknown[] }>("GET", `${base}/audiences?limit=100${query}`, undefined, 200);
    if (res.body.results.length !== 100) throw new Error(`list: ${res.body.results.length} audiences`);
    return res;
  };
  const withStats = page("&include=stats");
  const without = page("");
  const statsMs: number[] = [];
  const plainMs: number[] = [];
  await series(
    async () => {
      const res = await withStats();
      statsMs.push(res.ms);
      return res;
    },
    async () => plainMs.push((await without()).ms),
  );
  const warm = ctx.opts.pageWarmup;
  ctx.rows.push({
    ...latencyRow(statsMs.slice(warm), plainMs.slice(warm), {
      metric: "insight_list_stats",
      target: "insight_list_stats",
      label: (p99) => `listAudiences, a page of 100 with include=stats: p50 (p99 ${p99.toFixed(1)} ms)`,
      baseline: "the same page without include=stats,",
    }),
    ...done(),
  });
}

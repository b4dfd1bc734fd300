import { CHUNK_BITS } from "../../../src/features/membership/member-bits-sql.ts";
import { kinds, type RawDb, stored } from "../raw.ts";
import { latencyRow, thousands } from "./result-rows.ts";
import { type Context, checkTime, measure, type StoreWriter, ws } from "./scenario-context.ts";

/** Days of membership record written: the horizon (MEMBERSHIP_HISTORY_DAYS' default). */
const DAYS = 400;
/** One member in CHURN leaves a day, and another enters: issue 49's 1% daily churn. */
const CHURN = 100;
const DAY_MS = 86_400_000;

/**
 * The big audience's membership record for the 400 days before now, as the service's writes
 * would have left it: a row a day per chunk of its members (the bulk add wrote today's), the
 * chunk's members that day being today's less one member in CHURN, a different one each day,
 * with who entered and who left since the day before; the workspace's record complete since
 * then. One statement; the chunks' 100 masks are made once.
 */
async function fill(db: RawDb, workspaceId: string, audienceId: string): Promise<void> {
  await db.query(
    `UPDATE workspaces SET membership_record_since = now() - interval '${DAYS + 1} days' WHERE workspace_id = $1`,
    [workspaceId],
  );
  await db.query(
    `WITH masks AS MATERIALIZED (
       SELECT k, CAST(string_agg(CASE WHEN (p + k) % ${CHURN} = 0 THEN '0' ELSE '1' END, '' ORDER BY p) AS bit(${CHUNK_BITS})) AS mask
       FROM generate_series(0, ${CHURN - 1}) AS k CROSS JOIN generate_series(0, ${CHUNK_BITS - 1}) AS p GROUP BY k
     ),
     cur AS MATERIALIZED (
       SELECT chunk, ${stored("membership_chunks")} AS bits FROM membership_chunks WHERE workspace_id = $1 AND audience_id = $2 AND kind = ${kinds("member")}
     ),
     days AS (
       SELECT c.chunk, d, c.bits & m.mask AS members,
              CASE WHEN d = ${DAYS} THEN B'0'::bit(${CHUNK_BITS}) ELSE c.bits & p.mask END AS before
       FROM cur AS c CROSS JOIN generate_series(1, ${DAYS}) AS d
       JOIN masks AS m ON m.k = d % ${CHURN} JOIN masks AS p ON p.k = (d + 1) % ${CHURN}
     )
     INSERT INTO membership_record (workspace_id, audience_id, chunk, at, reason, entered, exited, members)
     SELECT $1, $2, chunk, now() - d * interval '1 day', 'rule',
            nullif(members & ~before, B'0'::bit(${CHUNK_BITS})), nullif(before & ~members, B'0'::bit(${CHUNK_BITS})), members
     FROM days`,
    [workspaceId, audienceId],
  );
}

/**
 * Scenario (issue 49): the big audience's members as of 200 days ago, a page of 100 beside the
 * current page (requests alternating), and who came and went over one day and over 30 days (the
 * first page of 100), with 400 days of record written straight into the service's store.
 */
export async function membershipHistory(ctx: Context, audienceId: string, writeServiceStore: StoreWriter) {
  const { size, pageWarmup, pageSamples } = ctx.opts;
  ctx.log(`membership history: ${DAYS} days of record for ${thousands(size)} members, 1% churn a day`);
  await writeServiceStore((db) => fill(db, ctx.workspaceId, audienceId));
  await ctx.analyze();
  const path = `${ws(ctx)}/audiences/${audienceId}`;
  const now = Date.now();
  const iso = (daysAgo: number) => new Date(now - daysAgo * DAY_MS + 60_000).toISOString();
  /** p50 series of two requests alternating, each checked by `check`. */
  const alternate = async (first: string, second: string, check: (body: any) => boolean) => {
    const firstMs: number[] = [];
    const secondMs: number[] = [];
    for (let i = 0; i < pageWarmup + pageSamples; i++) {
      checkTime(ctx);
      for (const [url, into] of [
        [first, firstMs],
        [second, secondMs],
      ] as const) {
        const res = await ctx.api.call<unknown>("GET", url, undefined, 200);
        if (!check(res.body)) throw new Error(`membership history: unexpected answer of ${url}`);
        if (i >= pageWarmup) into.push(res.ms);
      }
    }
    return { firstMs, secondMs };
  };

  let done = measure(ctx);
  // Members as of 200 days ago: every chunk misses one member in a hundred, so the count is exact
  // only if each chunk's row of that day is read.
  const asOf = await alternate(
    `${path}/members?limit=100&asOf=${iso(200)}`,
    `${path}/members?limit=100`,
    (body) => body.results.length === 100 && body.totalCount > size * 0.98 && body.totalCount <= size,
  );
  ctx.rows.push({
    ...latencyRow(asOf.firstMs, asOf.secondMs, {
      metric: "history_as_of_page",
      target: "history_as_of_page",
      label: (p99) => `a page of 100 as of 200 days ago, ${thousands(size)} members: p50 (p99 ${p99.toFixed(1)} ms)`,
      baseline: "the current page,",
    }),
    ...done(),
  });

  for (const [days, metric] of [
    [1, "history_changes_day"],
    [30, "history_changes_month"],
  ] as const) {
    done = measure(ctx);
    const changes = `${path}/changes?limit=100&from=${iso(100 + days)}&to=${iso(100)}`;
    // The current page beside it, for the run's own scale: the target is absolute.
    const series = await alternate(changes, `${path}/members?limit=100`, (body) => body.results.length > 0);
    ctx.rows.push({
      ...latencyRow(series.firstMs, series.secondMs, {
        metric,
        target: metric,
        label: (p99) =>
          `changes over ${days === 1 ? "one day" : "30 days"}, first page of 100, ${thousands(size)} members: p50 (p99 ${p99.toFixed(1)} ms)`,
        baseline: "the current page,",
      }),
      ...done(),
    });
  }
}

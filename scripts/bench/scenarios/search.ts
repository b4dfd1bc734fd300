import type { RawDb } from "../raw.ts";
import { timed } from "../raw.ts";
import { latencyRow, thousands } from "./result-rows.ts";
import { type Context, checkTime, measure, type StoreWriter } from "./scenario-context.ts";

/**
 * Members with data, written in one statement: user<n>@example.com, 5,000 first names, 20,000
 * last names, 4 roles, 1,000 companies. So `last12345` is rare (1 in 20,000) and `company1`
 * common (company1, company10–19, company100–199: 111 in 1,000). The triggers of the migrations
 * write their searched text into member_search on both sides. Then the trigram index's pending
 * entries are merged, as autovacuum does after a bulk load (the bench runs without it).
 */
async function fillMembers(db: RawDb, workspaceId: string, count: number): Promise<void> {
  await db.query(
    `INSERT INTO members (workspace_id, id, seq, created_at, email, fields, folded)
     SELECT $1, 's' || n, n, timestamp '2026-01-01' + n * interval '1 millisecond', 'user' || n || '@example.com', f,
            jsonb_build_object('id', 's' || n, 'email', 'user' || n || '@example.com',
                               'emails', jsonb_build_array('user' || n || '@example.com'), 'fields', f)
     FROM (SELECT n, jsonb_build_object('firstName', 'first' || n % 5000, 'lastName', 'last' || n % 20000,
                  'role', (ARRAY['engineer', 'manager', 'designer', 'sales'])[n % 4 + 1], 'company', 'company' || n % 1000) AS f
           FROM generate_series(1, $2::int) AS n) AS s`,
    [workspaceId, count],
  );
  await db.query(`UPDATE workspaces SET member_seq = $2 WHERE workspace_id = $1`, [workspaceId, count]);
  await db.query(`SELECT gin_clean_pending_list('member_search_trgm'::regclass)`);
}

/**
 * The raw search: the first page and the count, by the same trigram index on member_search (the
 * page's members looked up by number, the count in member_search alone).
 */
async function rawSearch(db: RawDb, workspaceId: string, term: string): Promise<number> {
  const [page, count] = await Promise.all([
    db.query(
      `SELECT m.id, m.created_at, m.email, m.fields, m.alternative_emails FROM members AS m
              WHERE m.workspace_id = $1 AND EXISTS (SELECT 1 FROM member_search AS s
                WHERE s.workspace_id = m.workspace_id AND s.seq = m.seq AND s.searched LIKE $2)
              ORDER BY m.created_at DESC, m.id DESC LIMIT 101`,
      [workspaceId, `%${term}%`],
    ),
    db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM member_search AS s WHERE s.workspace_id = $1 AND s.searched LIKE $2`,
      [workspaceId, `%${term}%`],
    ),
  ]);
  return page.length + (count[0]?.n ?? 0);
}

/**
 * Scenario: search= on the workspace's member listing at `size` members, a rare term and a
 * common one, beside the raw query that uses the same trigram index (page and count).
 */
export async function search(ctx: Context, writeServiceStore: StoreWriter): Promise<void> {
  const count = ctx.opts.size;
  const { body: workspace } = await ctx.admin.call<{ id: string }>(
    "POST",
    "/v0/workspaces",
    { name: "Bench search" },
    201,
  );
  const keyPath = `/v0/workspaces/${workspace.id}/api-keys`;
  const { body: key } = await ctx.admin.call<{ key: string }>("POST", keyPath, { name: "search" }, 201);
  ctx.log(`search: writing ${thousands(count)} members with data into both stores`);
  await ctx.raw.query(`INSERT INTO workspaces (workspace_id, name) VALUES ($1, 'bench search')`, [workspace.id]);
  await fillMembers(ctx.raw, workspace.id, count);
  await writeServiceStore((db) => fillMembers(db, workspace.id, count));
  await ctx.analyze();
  const api = ctx.clientFor(key.key);
  for (const [kind, term] of [
    ["rare", "last12345"],
    ["common", "company1"],
  ] as const) {
    const expected = kind === "rare" ? Math.floor(count / 20_000) : Math.round((count * 111) / 1_000);
    const rawMs: number[] = [];
    const serviceMs: number[] = [];
    const done = measure(ctx);
    for (let i = 0; i < ctx.opts.pageWarmup + Math.min(ctx.opts.pageSamples, 50); i++) {
      checkTime(ctx);
      const ms = await timed(() => rawSearch(ctx.raw, workspace.id, term));
      const res = await api.call<{ totalCount: number }>(
        "GET",
        `/v0/workspaces/${workspace.id}/members?limit=100&search=${term}`,
        undefined,
        200,
      );
      if (i === 0 && Math.abs(res.body.totalCount - expected) > expected / 100 + 1) {
        throw new Error(`search ${term}: ${res.body.totalCount} matches, expected about ${expected}`);
      }
      if (i >= ctx.opts.pageWarmup) {
        rawMs.push(ms);
        serviceMs.push(res.ms);
      }
    }
    ctx.rows.push({
      ...latencyRow(serviceMs, rawMs, {
        metric: `search_${kind}`,
        target: `search_${kind}`,
        label: (p99) =>
          `search a ${kind} term ("${term}") in ${thousands(count)} members, page and totalCount: p50 (p99 ${p99.toFixed(1)} ms)`,
      }),
      ...done(),
    });
  }
}

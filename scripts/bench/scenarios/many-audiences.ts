import { encodeCursor } from "../../../src/domain/cursor.ts";
import { type RawDb, timed } from "../raw.ts";
import { latencyRow, thousands } from "./result-rows.ts";
import { type Context, checkTime, measure, type StoreWriter } from "./scenario-context.ts";

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

/** Chunks of 8,192 member numbers the members of fillMemberships span. */
const MEMBER_CHUNKS = 13;
/** The member whose audiences are read, and the audiences it belongs to (of chunk 0's). */
const MEMBER = { id: "many5", seq: 5, audiences: [13, 26, 39] };
const audienceId = (n: number) => `aud_many${String(n).padStart(8, "0")}`;

/**
 * Members 1…13 × 8,192 of the service's workspace, and one member of each audience: audience n
 * holds member (n × 7) mod 8,192 of chunk n mod 13, by hand. MEMBER is also in three audiences of
 * its chunk, so it shares that chunk with 769 audiences and is a member of three.
 */
async function fillMemberships(db: RawDb, workspaceId: string, count: number): Promise<void> {
  const members = MEMBER_CHUNKS * 8_192;
  await db.query(
    `INSERT INTO members (workspace_id, id, seq, created_at, fields, folded)
     SELECT $1, 'many' || n, n, timestamp '2026-01-01' + n * interval '1 millisecond', '{}',
            jsonb_build_object('id', 'many' || n, 'email', null, 'emails', '[]'::jsonb, 'fields', '{}'::jsonb)
     FROM generate_series(1, $2::int) AS n`,
    [workspaceId, members],
  );
  await db.query(`UPDATE workspaces SET member_seq = $2 WHERE workspace_id = $1`, [workspaceId, members]);
  await db.query(
    `INSERT INTO membership_chunks (workspace_id, audience_id, kind, chunk, bits, count)
     SELECT $1, 'aud_many' || lpad(n::text, 8, '0'), k.kind, n % $3, b.bits, bit_count(b.bits)::int
     FROM generate_series(1, $2::int) AS n
     CROSS JOIN LATERAL (
       SELECT CASE WHEN n = ANY($5::int[]) THEN set_bit(c.bits, $4, 1) ELSE c.bits END AS bits
       FROM (SELECT set_bit(B'0'::bit(8192), ((n * 7) % 8192)::int, 1) AS bits) AS c
     ) AS b
     CROSS JOIN (VALUES ('include'::membership_kind), ('member'::membership_kind)) AS k(kind)`,
    [workspaceId, count, MEMBER_CHUNKS, MEMBER.seq, MEMBER.audiences],
  );
  await db.query(
    `UPDATE audiences AS a SET member_count = t.count FROM membership_chunks AS t
     WHERE a.workspace_id = $1 AND t.workspace_id = a.workspace_id AND t.audience_id = a.id AND t.kind = 'member'`,
    [workspaceId],
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
export async function manyAudiences(ctx: Context, writeServiceStore: StoreWriter): Promise<void> {
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
  await writeServiceStore(async (db) => {
    await fillAudiences(db, workspace.id, count);
    await fillMemberships(db, workspace.id, count);
  });
  await ctx.analyze();
  const api = ctx.clientFor(key.key);
  const base = `/v0/workspaces/${workspace.id}/audiences`;
  const middle = {
    createdAt: new Date(Date.UTC(2026, 0, 1) + count / 2),
    id: audienceId(count / 2),
  };
  const memberAudiences = MEMBER.audiences.map(audienceId);
  const cases = [
    {
      metric: "list_audiences_unpaged",
      label: `listAudiences, ${thousands(count)} audiences, unpaged`,
      path: base,
      expect: count,
      raw: () => rawList(ctx.raw, workspace.id),
    },
    {
      metric: "list_audiences_first_page",
      label: "listAudiences, a page of 100 at the start",
      path: `${base}?limit=100`,
      expect: 100,
      raw: () => rawList(ctx.raw, workspace.id, { after: null }),
    },
    {
      metric: "list_audiences_middle_page",
      label: "listAudiences, a page of 100 in the middle",
      path: `${base}?limit=100&after=${encodeCursor("audiences:DESC", middle)}`,
      expect: 100,
      raw: () => rawList(ctx.raw, workspace.id, { after: middle }),
    },
    {
      // Issue item: the cost follows the member's audiences, not the workspace's. A bitset has no
      // index from member to audiences: the read takes the chunks at the member's number, here
      // 769 audiences', and the baseline is the member's three audiences read by key.
      metric: "member_audiences",
      label: `GET …/members/{id}/audiences, a member of 3 of ${thousands(count)} audiences`,
      path: `/v0/workspaces/${workspace.id}/members/${MEMBER.id}/audiences`,
      expect: MEMBER.audiences.length,
      info: true,
      baseline: "the 3 audiences' rows by key,",
      raw: () =>
        ctx.raw.query(
          `SELECT id, name, is_archived FROM audiences WHERE workspace_id = $1 AND id = ANY($2::text[])
           ORDER BY created_at DESC, id DESC`,
          [workspace.id, memberAudiences],
        ),
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
      if (res.body.results.length !== c.expect) throw new Error(`${c.metric}: ${res.body.results.length} audiences`);
      if (i >= ctx.opts.pageWarmup) {
        rawMs.push(ms);
        serviceMs.push(res.ms);
      }
    }
    ctx.rows.push({
      ...latencyRow(serviceMs, rawMs, {
        metric: c.metric,
        target: "info" in c ? undefined : "list_audiences",
        label: (p99) => `${c.label}: p50 (p99 ${p99.toFixed(1)} ms)`,
        ...("baseline" in c ? { baseline: c.baseline } : {}),
      }),
      ...done(),
    });
  }
}

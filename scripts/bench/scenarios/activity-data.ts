// The activity scenario's data (activities.ts): members and their activities written straight into
// a store, and the raw statements its rows are set beside.
import { chunks, kinds, type RawDb } from "../raw.ts";

export const DAY = 86_400_000;
/** The stored activities lie on the midnights of the DAYS days before the day before the base day. */
const DAYS = 358;
/** Activity n's type: 3 in 10 order.placed (with an amount), 5 session.attended, 2 page.viewed. */
export const TYPES = ["order.placed", "session.attended", "page.viewed"] as const;
const TYPE_SQL = `(CASE WHEN n % 10 < 3 THEN 'order.placed' WHEN n % 10 < 8 THEN 'session.attended' ELSE 'page.viewed' END)`;
/** Extra activities of member 1, so that its timeline has pages of 100. */
export const TIMELINE_EXTRA = 500;
export const memberId = (seq: number) => `ac${seq}`;

/** The month partitions PostgreSQL's store would hold for these months (activity-partitions-repo.ts). */
async function monthPartitions(db: RawDb, from: Date, to: Date): Promise<void> {
  for (let y = from.getUTCFullYear(), m = from.getUTCMonth(); Date.UTC(y, m, 1) <= to.getTime(); m++) {
    const start = new Date(Date.UTC(y, m, 1));
    const end = new Date(Date.UTC(y, m + 1, 1));
    const name = `activities_y${start.getUTCFullYear()}m${String(start.getUTCMonth() + 1).padStart(2, "0")}`;
    await db.query(
      `CREATE TABLE IF NOT EXISTS "${name}" PARTITION OF activities
       FOR VALUES FROM ('${start.toISOString()}') TO ('${end.toISOString()}')`,
    );
  }
}

/**
 * Members 1 … members (bare), the three types, and `count` activities spread over them and over
 * 358 midnights (plus TIMELINE_EXTRA of member 1): one statement each. On PostgreSQL the months
 * get their partitions first, as the service's worker makes them, so that nothing lands in the
 * default partition.
 */
export async function fillActivities(
  db: RawDb,
  workspaceId: string,
  members: number,
  count: number,
  base: Date,
  partitioned: boolean,
): Promise<void> {
  if (partitioned) await monthPartitions(db, new Date(base.getTime() - (DAYS + 3) * DAY), base);
  await db.query(
    `INSERT INTO members (workspace_id, id, seq, created_at, folded)
     SELECT $1, 'ac' || n, n, timestamp '2025-01-01' + n * interval '1 millisecond',
            jsonb_build_object('id', 'ac' || n, 'email', null, 'emails', '[]'::jsonb, 'fields', '{}'::jsonb)
     FROM generate_series(1, $2::int) AS n`,
    [workspaceId, members],
  );
  await db.query(`UPDATE workspaces SET member_seq = $2 WHERE workspace_id = $1`, [workspaceId, members]);
  await db.query(
    `INSERT INTO activity_types (workspace_id, type, count, last_at, properties)
     SELECT $1, t, 0, $2::timestamptz, CASE WHEN t = 'order.placed' THEN '{"amount":["number"],"currency":["string"]}'::jsonb ELSE '{}' END
     FROM unnest($3::text[]) AS t`,
    [workspaceId, base.toISOString(), [...TYPES]],
  );
  await db.query(
    `INSERT INTO activities (workspace_id, member_seq, occurred_at, type_id, id, properties)
     SELECT $1, CASE WHEN n > $3 THEN 1 ELSE 1 + (n::int8 * 7919) % $2 END,
            $4::timestamptz - (2 + n % ${DAYS}) * interval '1 day', t.type_id, 'act' || n,
            CASE WHEN t.type = 'order.placed' THEN jsonb_build_object('amount', n % 200, 'currency', 'EUR') END
     FROM generate_series(1, $3::int + ${TIMELINE_EXTRA}) AS n
     JOIN activity_types AS t ON t.workspace_id = $1 AND t.type = ${TYPE_SQL}`,
    [workspaceId, members, count, base.toISOString()],
  );
  // Their client ids, as an ingest claims them (activity-repo.ts).
  await db.query(
    `INSERT INTO activity_ids (workspace_id, id, member_seq, occurred_at)
     SELECT workspace_id, id, member_seq, occurred_at FROM activities WHERE workspace_id = $1 AND id IS NOT NULL`,
    [workspaceId],
  );
  await db.query(
    `UPDATE activity_types AS t SET count = c.n FROM (
       SELECT type_id, count(*) AS n FROM activities WHERE workspace_id = $1 GROUP BY type_id) AS c
     WHERE t.workspace_id = $1 AND t.type_id = c.type_id`,
    [workspaceId],
  );
}

/** The numbers the store gave the types. */
export async function typeIds(db: RawDb, workspaceId: string): Promise<Map<string, number>> {
  const rows = await db.query<{ type: string; type_id: number }>(
    `SELECT type, type_id FROM activity_types WHERE workspace_id = $1`,
    [workspaceId],
  );
  return new Map(rows.map((r) => [r.type, r.type_id]));
}

/** An entry of an ingest, as the API takes it, and the same as a raw row. */
export interface Entry {
  id: string;
  seq: number;
  type: string;
  occurredAt: string;
  properties?: Record<string, string | number>;
}
export const asInput = (e: Entry) => ({
  id: e.id,
  memberId: memberId(e.seq),
  type: e.type,
  occurredAt: e.occurredAt,
  ...(e.properties ? { properties: e.properties } : {}),
});

/** The raw baseline of an ingest: the same rows, members known by number, in one INSERT … SELECT FROM unnest. */
export const rawInsert = (db: RawDb, workspaceId: string, types: Map<string, number>, entries: Entry[]) =>
  db.query(
    `INSERT INTO activities (workspace_id, member_seq, occurred_at, type_id, id, properties)
     SELECT $1, v.seq, v.at, v.type_id, v.id, v.properties::jsonb
     FROM unnest($2::int[], $3::timestamptz[], $4::int[], $5::text[], $6::text[]) AS v(seq, at, type_id, id, properties)`,
    [
      workspaceId,
      entries.map((e) => e.seq),
      entries.map((e) => e.occurredAt),
      entries.map((e) => types.get(e.type)),
      entries.map((e) => e.id),
      entries.map((e) => (e.properties ? JSON.stringify(e.properties) : null)),
    ],
  );

/**
 * Raw SQL doing only what an ingest must do beyond the raw INSERT: members found by their id (not
 * given by number), types by name, client ids claimed unique in activity_ids, and only the rows
 * whose id it claimed stored; one statement. It says how near the INSERT alone any ingest can come.
 */
export const rawIngestWork = (db: RawDb, workspaceId: string, entries: Entry[]) =>
  db.query(
    `WITH v AS MATERIALIZED (
       SELECT m.seq, v.at, t.type_id, v.id, v.properties::jsonb AS properties
       FROM unnest($2::text[], $3::timestamptz[], $4::text[], $5::text[], $6::text[]) AS v(member, at, type, id, properties)
       JOIN members AS m ON m.workspace_id = $1 AND m.id = v.member
       JOIN activity_types AS t ON t.workspace_id = $1 AND t.type = v.type
     ),
     claimed AS (
       INSERT INTO activity_ids (workspace_id, id, member_seq, occurred_at)
       SELECT $1, v.id, v.seq, v.at FROM v ON CONFLICT DO NOTHING RETURNING id
     )
     INSERT INTO activities (workspace_id, member_seq, occurred_at, type_id, id, properties)
     SELECT $1, v.seq, v.at, v.type_id, v.id, v.properties FROM v JOIN claimed AS c ON c.id = v.id`,
    [
      workspaceId,
      entries.map((e) => memberId(e.seq)),
      entries.map((e) => e.occurredAt),
      entries.map((e) => e.type),
      entries.map((e) => e.id),
      entries.map((e) => (e.properties ? JSON.stringify(e.properties) : null)),
    ],
  );

/**
 * The raw baseline of a rule set: the members with at least `atLeast` activities of the type
 * since `from`, aggregated from the index by workspace, type and time into bitset chunks, written
 * as audience $2's match and member chunks; one statement. Returns how many members matched.
 */
export async function rawRuleWritten(
  db: RawDb,
  workspaceId: string,
  audienceId: string,
  typeId: number,
  from: Date,
  atLeast: number,
): Promise<number> {
  const put = (kind: "match" | "member") => `
    INSERT INTO membership_chunks (workspace_id, audience_id, kind, chunk, bits, count)
    SELECT $1, $2, ${kinds(kind)}, r.chunk, r.bits, bit_count(r.bits) FROM r`;
  const seqs = `SELECT a.member_seq AS seq FROM activities AS a
    WHERE a.workspace_id = $1 AND a.type_id = $3 AND a.occurred_at >= $4::timestamptz
    GROUP BY a.member_seq HAVING count(*) >= $5`;
  const [row] = await db.query<{ members: number }>(
    `WITH r AS MATERIALIZED (SELECT * FROM ${chunks(seqs)} AS r),
     m AS (${put("match")}), w AS (${put("member")})
     SELECT coalesce(sum(bit_count(r.bits)), 0)::int AS members FROM r`,
    [workspaceId, audienceId, typeId, from.toISOString(), atLeast],
  );
  return row?.members ?? 0;
}

/** The raw baseline of a timeline page: the same keyset statement, the member looked up by id. */
export const rawTimeline = (db: RawDb, workspaceId: string, id: string, limit: number) =>
  db.query(
    `SELECT a.id, t.type, a.occurred_at, a.properties, a.num FROM members AS m
     JOIN activities AS a ON a.workspace_id = m.workspace_id AND a.member_seq = m.seq
     JOIN activity_types AS t ON t.workspace_id = a.workspace_id AND t.type_id = a.type_id
     WHERE m.workspace_id = $1 AND m.id = $2
     ORDER BY a.occurred_at DESC, a.num DESC LIMIT $3`,
    [workspaceId, id, limit],
  );

/**
 * Bytes of a table (every partition of a partitioned one, with their indexes and TOAST) per row,
 * with those of the tables `also` (the service's activity_ids, which holds the client ids).
 */
export async function bytesPerActivity(
  db: RawDb,
  table = "activities",
  also: string[] = [],
): Promise<{ bytes: number; rows: number }> {
  // pg_partition_tree names a partitioned table's parts; a plain table is none of them.
  const extra = also.map((name) => ` + pg_total_relation_size('${name}')`).join("");
  const [row] = await db.query<{ bytes: string; rows: string }>(
    `SELECT (coalesce((SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree('${table}')),
                      pg_total_relation_size('${table}'))${extra})::int8 AS bytes,
            (SELECT count(*) FROM ${table})::int8 AS rows`,
  );
  return { bytes: Number(row?.bytes ?? 0), rows: Number(row?.rows ?? 0) };
}

/**
 * A plain table with activities' columns and indexes (not partitioned), holding the raw store's
 * activities written in the order they arrived (by num) into its indexes, as an ingest writes them.
 */
export async function plainCopy(db: RawDb): Promise<void> {
  await db.query(`CREATE TABLE plain_activities (
    workspace_id TEXT COLLATE "C" NOT NULL, member_seq INTEGER NOT NULL, occurred_at TIMESTAMPTZ(3) NOT NULL,
    num BIGINT NOT NULL, type_id INTEGER NOT NULL, id TEXT COLLATE "C", properties JSONB,
    PRIMARY KEY (workspace_id, member_seq, occurred_at, num))`);
  await db.query(`CREATE INDEX ON plain_activities (workspace_id, id) WHERE id IS NOT NULL`);
  await db.query(`CREATE INDEX ON plain_activities (workspace_id, type_id, occurred_at)`);
  await db.query(`INSERT INTO plain_activities SELECT workspace_id, member_seq, occurred_at, num, type_id, id, properties
    FROM activities ORDER BY num`);
}

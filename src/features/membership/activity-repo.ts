import { Prisma } from "../../../generated/prisma/client.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";
import type { StoredActivity } from "./rules/activity-ingest/activity-batch.ts";

/**
 * An activity to store: its member by number when the caller resolved it (`seq`), else by id
 * (`memberId`, looked up by the statement); its type by name (the statement numbers types).
 */
export interface ActivityRow {
  seq?: number | undefined;
  memberId?: string | undefined;
  type: string;
  occurredAt: Date;
  id: string | undefined;
  properties: Record<string, string | number | boolean> | null;
}

/**
 * What storing did: `written` (how many rows were stored, the rest being ids already stored, and
 * each stored row as followActivities reads it: its member's number, type, occurredAt and
 * properties), or nothing at all when some member named by id is not known, with the client ids
 * found stored, so that the caller leaves those out, resolves the members and stores the rest
 * again (activity-service.ts).
 */
export type StoreOutcome =
  | { written: true; accepted: number; stored: StoredActivity[] }
  | { written: false; storedIds: Set<string> };

/** The store statement's answer: whether it wrote, each row's member number, the ids left out. */
interface StoreAnswer {
  written: boolean;
  accepted: number;
  storedIds: string[] | null;
  /** Each row's member number, in the order given (when written). */
  seqs: number[] | null;
  /** The client ids not stored because the workspace had them already (when written). */
  skipped: string[] | null;
}

/** The JSON types of a property's values, as activity-types reports them. */
export type PropertyType = "string" | "number" | "boolean";

/** What one write adds to a type: how many, the latest occurredAt, the property keys and their types. */
interface TypeSummary {
  type: string;
  n: number;
  lastAt: string;
  properties: Record<string, PropertyType[]>;
}

/**
 * The writes of activities, inside a write transaction that holds the workspace's member lock
 * (src/features/membership/write-locks.ts): under it no other transaction stores activities of
 * the workspace, so activity_types rows are updated or inserted without a race.
 */
export const activityRepo = {
  /** Which of these client ids the workspace has stored (one probe of activity_ids' key each). */
  async storedIds(tx: SqlClient, workspaceId: string, ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await tx.$queryRaw<{ id: string }[]>`
      SELECT i.id FROM activity_ids AS i
      WHERE i.workspace_id = ${workspaceId}
        AND i.id = ANY(ARRAY(SELECT json_array_elements_text(${JSON.stringify(ids)}::json)))`;
    return new Set(rows.map((row) => row.id));
  },

  /**
   * Stores activities and keeps activity_types exact (counts, latest occurredAt, property keys
   * and types), in one statement and one round trip (an ingest's whole write when its members
   * exist): the rows travel as one JSON parameter; the members named by id are numbered in the
   * same statement; the client ids are claimed in activity_ids (INSERT … ON CONFLICT DO NOTHING,
   * one probe of its key each), and a row whose id was already there is not stored; each type's
   * row is updated, or inserted when the workspace has none (numbers are taken only for new
   * types). When a member is unknown, nothing is written and the outcome names the ids found
   * stored.
   *
   * The caller's summary of the types (counts, property keys) holds when every row is stored;
   * when some id was already stored, the summary is made here of the rows stored instead.
   */
  async store(tx: SqlClient, workspaceId: string, rows: ActivityRow[]): Promise<StoreOutcome> {
    if (rows.length === 0) return { written: true, accepted: 0, stored: [] };
    const activities = rows.map((row) => ({
      seq: row.seq ?? null,
      member: row.seq === undefined ? (row.memberId ?? null) : null,
      // As milliseconds since the epoch: writing 10,000 Dates as ISO text took a tenth of the
      // server's CPU of an ingest (and reading text is PostgreSQL's slower way to a timestamp).
      ms: row.occurredAt.getTime(),
      type: row.type,
      id: row.id ?? null,
      properties: row.properties,
    }));
    const [result] = await tx.$queryRaw<StoreAnswer[]>`
      WITH v AS MATERIALIZED (
        SELECT v.ord, coalesce(v.seq, m.seq) AS seq, timestamptz 'epoch' + v.ms * interval '1 millisecond' AS at,
               v.type, v.id, v.properties
        FROM ROWS FROM (json_to_recordset(${JSON.stringify(activities)}::json)
          AS (seq int, member text, ms bigint, type text, id text, properties jsonb))
          WITH ORDINALITY AS v(seq, member, ms, type, id, properties, ord)
        LEFT JOIN members AS m ON v.member IS NOT NULL AND m.workspace_id = ${workspaceId} AND m.id = v.member
      ),
      go AS MATERIALIZED (SELECT NOT EXISTS (SELECT 1 FROM v WHERE v.seq IS NULL) AS ok),
      claimed AS (
        INSERT INTO activity_ids (workspace_id, id, member_seq, occurred_at)
        SELECT ${workspaceId}, v.id, v.seq, v.at FROM v WHERE v.id IS NOT NULL AND (SELECT ok FROM go)
        ON CONFLICT (workspace_id, id) DO NOTHING
        RETURNING id
      ),
      clean AS MATERIALIZED (
        SELECT (SELECT count(*) FROM claimed) = (SELECT count(*) FROM v WHERE v.id IS NOT NULL) AS yes
      ),
      kept AS MATERIALIZED (
        SELECT v.* FROM v
        WHERE (SELECT ok FROM go) AND (v.id IS NULL OR (SELECT yes FROM clean) OR v.id IN (SELECT id FROM claimed))
      ),
      summary AS MATERIALIZED (
        SELECT s.* FROM json_to_recordset(${JSON.stringify(summarize(rows))}::json)
          AS s(type text, n bigint, "lastAt" timestamptz, properties jsonb)
        WHERE (SELECT ok FROM go) AND (SELECT yes FROM clean)
        UNION ALL
        SELECT k.type, count(*), max(k.at), ${keptProperties} FROM kept AS k
        WHERE NOT (SELECT yes FROM clean) GROUP BY k.type
      ),
      known AS (
        UPDATE activity_types AS t
        SET count = t.count + s.n, last_at = greatest(t.last_at, s."lastAt"),
            properties = CASE WHEN t.properties @> s.properties THEN t.properties
                              ELSE ${mergedProperties(Prisma.sql`t.properties`, Prisma.sql`s.properties`)} END
        FROM summary AS s
        WHERE t.workspace_id = ${workspaceId} AND t.type = s.type
        RETURNING t.type_id, t.type
      ),
      fresh AS (
        INSERT INTO activity_types (workspace_id, type, count, last_at, properties)
        SELECT ${workspaceId}, s.type, s.n, s."lastAt", s.properties FROM summary AS s
        WHERE NOT EXISTS (SELECT 1 FROM known AS k WHERE k.type = s.type)
        RETURNING type_id, type
      ),
      numbered AS (SELECT type_id, type FROM known UNION ALL SELECT type_id, type FROM fresh),
      inserted AS (
        INSERT INTO activities (workspace_id, member_seq, occurred_at, type_id, id, properties)
        SELECT ${workspaceId}, k.seq, k.at, t.type_id, k.id, k.properties
        FROM kept AS k JOIN numbered AS t ON t.type = k.type
      )
      SELECT (SELECT ok FROM go) AS written, (SELECT count(*)::int FROM kept) AS accepted,
             (SELECT array_agg(i.id) FROM activity_ids AS i
              WHERE NOT (SELECT ok FROM go) AND i.workspace_id = ${workspaceId}
                AND i.id = ANY(ARRAY(SELECT v.id FROM v WHERE v.id IS NOT NULL))) AS "storedIds",
             (SELECT json_agg(v.seq ORDER BY v.ord) FROM v WHERE (SELECT ok FROM go)) AS seqs,
             (SELECT json_agg(v.id) FROM v
              WHERE NOT (SELECT yes FROM clean) AND v.id IS NOT NULL AND v.id NOT IN (SELECT id FROM claimed)) AS skipped`;
    if (result?.written) {
      const seqs = result.seqs ?? [];
      const skipped = new Set(result.skipped ?? []);
      const stored: StoredActivity[] = [];
      rows.forEach((row, i) => {
        if (row.id !== undefined && skipped.has(row.id)) return;
        stored.push({ seq: seqs[i] as number, type: row.type, occurredAt: row.occurredAt, properties: row.properties });
      });
      return { written: true, accepted: result.accepted, stored };
    }
    return { written: false, storedIds: new Set(result?.storedIds ?? []) };
  },
};

/**
 * The property keys and JSON types of the rows of `kept` of the type `k.type` (a summary made by
 * the statement when some rows were not stored): {"amount": ["number"]}, types in byte order.
 */
const keptProperties = Prisma.sql`(
  SELECT coalesce(jsonb_object_agg(p.key, p.types), '{}') FROM (
    SELECT e.key, jsonb_agg(DISTINCT jsonb_typeof(e.value) ORDER BY jsonb_typeof(e.value)) AS types
    FROM kept AS r, jsonb_each(r.properties) AS e WHERE r.type = k.type GROUP BY e.key
  ) AS p)`;

export type ActivityRepo = typeof activityRepo;

/**
 * A WITH item that deletes the activities of the members in the CTE `rows` (column seq), being
 * deleted, with their client ids, and takes them off their types' counts (member-repo.ts's delete).
 */
export const forgetActivities = (workspaceId: string, rows: string): Prisma.Sql => Prisma.sql`
  activities_forgotten AS (
    DELETE FROM activities AS a USING ${Prisma.raw(rows)} AS r
    WHERE a.workspace_id = ${workspaceId} AND a.member_seq = r.seq RETURNING a.type_id, a.id
  ),
  activity_ids_forgotten AS (
    DELETE FROM activity_ids AS i USING activities_forgotten AS f
    WHERE i.workspace_id = ${workspaceId} AND f.id IS NOT NULL AND i.id = f.id
  ),
  activity_counts_forgotten AS (
    UPDATE activity_types AS t SET count = t.count - f.n
    FROM (SELECT type_id, count(*) AS n FROM activities_forgotten GROUP BY type_id) AS f
    WHERE t.workspace_id = ${workspaceId} AND t.type_id = f.type_id
  )`;

/** The union of two property maps ({key: [types]}), each key's types in byte order. */
export const mergedProperties = (a: Prisma.Sql, b: Prisma.Sql): Prisma.Sql => Prisma.sql`
  (SELECT coalesce(jsonb_object_agg(k.key, (
      SELECT jsonb_agg(DISTINCT e.value ORDER BY e.value)
      FROM jsonb_array_elements_text(coalesce(${a} -> k.key, '[]') || coalesce(${b} -> k.key, '[]')) AS e(value)
    )), '{}')
   FROM (SELECT jsonb_object_keys(${a}) UNION SELECT jsonb_object_keys(${b})) AS k(key))`;

/** Each type's share of a write: how many, the latest occurredAt, its property keys and types. */
function summarize(rows: ActivityRow[]): TypeSummary[] {
  const byType = new Map<string, { n: number; lastAt: number; properties: Map<string, Set<PropertyType>> }>();
  for (const row of rows) {
    let summary = byType.get(row.type);
    if (!summary) {
      summary = { n: 0, lastAt: row.occurredAt.getTime(), properties: new Map() };
      byType.set(row.type, summary);
    }
    summary.n += 1;
    summary.lastAt = Math.max(summary.lastAt, row.occurredAt.getTime());
    for (const [key, value] of Object.entries(row.properties ?? {})) {
      const types = summary.properties.get(key) ?? new Set<PropertyType>();
      types.add(typeof value as PropertyType);
      summary.properties.set(key, types);
    }
  }
  return [...byType].map(([type, s]) => ({
    type,
    n: s.n,
    lastAt: new Date(s.lastAt).toISOString(),
    properties: Object.fromEntries([...s.properties].map(([key, types]) => [key, [...types].sort()])),
  }));
}

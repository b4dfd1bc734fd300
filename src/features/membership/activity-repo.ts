import { Prisma } from "../../../generated/prisma/client.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";

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
 * What storing did: `written` (each stored row's member number and type, once per pair), or
 * nothing at all when some rows could not be stored as given (a client id already stored, a
 * member not known by its id), with the client ids found stored, so that the caller leaves
 * those out, resolves the members and stores the rest again (activity-service.ts).
 */
export type StoreOutcome =
  | { written: true; stored: { seq: number; type: string }[] }
  | { written: false; storedIds: Set<string> };

/** The store statement's answer: the client ids found stored, and what it stored when it wrote. */
interface StoreAnswer {
  storedIds: string[] | null;
  stored: [number, string][] | null;
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
 * the workspace, so looking client ids up before storing is exact, and activity_types rows are
 * updated or inserted without a race.
 */
export const activityRepo = {
  /** Which of these client ids the workspace has stored (the ids as one array: see store). */
  async storedIds(tx: SqlClient, workspaceId: string, ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await tx.$queryRaw<{ id: string }[]>`
      SELECT a.id FROM activities AS a
      WHERE a.workspace_id = ${workspaceId} AND a.id IS NOT NULL
        AND a.id = ANY(ARRAY(SELECT json_array_elements_text(${JSON.stringify(ids)}::json)))`;
    return new Set(rows.map((row) => row.id));
  },

  /**
   * Stores activities and keeps activity_types exact (counts, latest occurredAt, property keys
   * and types), in one statement and one round trip (an ingest's whole write when its members
   * exist): the rows travel as one JSON parameter; the client ids already stored are looked up
   * and the members named by id are numbered in the same statement; each type's row is updated,
   * or inserted when the workspace has none (numbers are taken only for new types). When a client
   * id is already stored or a member is unknown, nothing is written (the summary of the types
   * was made for every row) and the outcome names the ids found stored.
   *
   * The ids are looked up as one array (`= ANY`), not as rows to join: joined, the planner hashed
   * them against every partition read whole; as an array, each partition's index of ids is probed.
   */
  async store(tx: SqlClient, workspaceId: string, rows: ActivityRow[]): Promise<StoreOutcome> {
    if (rows.length === 0) return { written: true, stored: [] };
    const activities = rows.map((row) => ({
      seq: row.seq ?? null,
      member: row.seq === undefined ? (row.memberId ?? null) : null,
      at: row.occurredAt.toISOString(),
      type: row.type,
      id: row.id ?? null,
      properties: row.properties,
    }));
    const [result] = await tx.$queryRaw<StoreAnswer[]>`
      WITH v AS MATERIALIZED (
        SELECT coalesce(v.seq, m.seq) AS seq, v.at, v.type, v.id, v.properties
        FROM json_to_recordset(${JSON.stringify(activities)}::json)
          AS v(seq int, member text, at timestamptz, type text, id text, properties jsonb)
        LEFT JOIN members AS m ON v.member IS NOT NULL AND m.workspace_id = ${workspaceId} AND m.id = v.member
      ),
      stored_ids AS MATERIALIZED (
        SELECT a.id FROM activities AS a
        WHERE a.workspace_id = ${workspaceId} AND a.id IS NOT NULL
          AND a.id = ANY(ARRAY(SELECT v.id FROM v WHERE v.id IS NOT NULL))
      ),
      go AS MATERIALIZED (
        SELECT NOT EXISTS (SELECT 1 FROM stored_ids) AND NOT EXISTS (SELECT 1 FROM v WHERE v.seq IS NULL) AS ok
      ),
      summary AS MATERIALIZED (
        SELECT s.* FROM json_to_recordset(${JSON.stringify(summarize(rows))}::json)
          AS s(type text, n bigint, "lastAt" timestamptz, properties jsonb)
        WHERE (SELECT ok FROM go)
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
        SELECT ${workspaceId}, v.seq, v.at, t.type_id, v.id, v.properties
        FROM v JOIN numbered AS t ON t.type = v.type
      )
      SELECT (SELECT array_agg(id) FROM stored_ids) AS "storedIds",
             (SELECT json_agg(json_build_array(p.seq, p.type)) FROM (SELECT DISTINCT seq, type FROM v) AS p
              WHERE (SELECT ok FROM go)) AS stored`;
    if (result?.stored) return { written: true, stored: result.stored.map(([seq, type]) => ({ seq, type })) };
    return { written: false, storedIds: new Set(result?.storedIds ?? []) };
  },
};

export type ActivityRepo = typeof activityRepo;

/**
 * A WITH item that deletes the activities of the members in the CTE `rows` (column seq), being
 * deleted, and takes them off their types' counts (member-repo.ts's delete).
 */
export const forgetActivities = (workspaceId: string, rows: string): Prisma.Sql => Prisma.sql`
  activities_forgotten AS (
    DELETE FROM activities AS a USING ${Prisma.raw(rows)} AS r
    WHERE a.workspace_id = ${workspaceId} AND a.member_seq = r.seq RETURNING a.type_id
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

import { Prisma } from "../../../generated/prisma/client.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";

/** An activity as stored: its member by number, its type by name (the statement numbers types). */
export interface ActivityRow {
  seq: number;
  type: string;
  occurredAt: Date;
  id: string | undefined;
  properties: Record<string, string | number | boolean> | null;
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
  /**
   * Which of these client ids the workspace has stored. The ids as one array (`= ANY`), not as
   * rows to join: joined, the planner hashed them against every partition read whole; as an
   * array, each partition's index of ids is probed.
   */
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
   * and types), in one statement: the rows travel as one JSON parameter, and each type's row is
   * updated, or inserted when the workspace has none (numbers are taken only for new types).
   */
  async insert(tx: SqlClient, workspaceId: string, rows: ActivityRow[]): Promise<void> {
    if (rows.length === 0) return;
    const activities = rows.map((row) => ({
      seq: row.seq,
      at: row.occurredAt.toISOString(),
      type: row.type,
      id: row.id ?? null,
      properties: row.properties,
    }));
    await tx.$executeRaw`
      WITH summary AS MATERIALIZED (
        SELECT * FROM json_to_recordset(${JSON.stringify(summarize(rows))}::json)
          AS s(type text, n bigint, "lastAt" timestamptz, properties jsonb)
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
      numbered AS (SELECT type_id, type FROM known UNION ALL SELECT type_id, type FROM fresh)
      INSERT INTO activities (workspace_id, member_seq, occurred_at, type_id, id, properties)
      SELECT ${workspaceId}, v.seq, v.at, t.type_id, v.id, v.properties
      FROM json_to_recordset(${JSON.stringify(activities)}::json)
        AS v(seq int, at timestamptz, type text, id text, properties jsonb)
      JOIN numbered AS t ON t.type = v.type`;
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

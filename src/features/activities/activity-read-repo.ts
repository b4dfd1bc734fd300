import { Prisma } from "../../../generated/prisma/client.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";

/** One activity of a timeline, with its place in it (occurredAt, then num). */
export interface TimelineRow {
  id: string | null;
  type: string;
  occurredAt: Date;
  properties: Record<string, string | number | boolean> | null;
  num: string;
}

export interface TimelineQuery {
  type?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  /** The position of the previous page's last activity. */
  after?: { occurredAt: Date; num: string } | undefined;
  limit: number;
}

export interface TypeRow {
  type: string;
  count: number;
  lastAt: Date;
  properties: Record<string, ("string" | "number" | "boolean")[]>;
}

/** Reading activities: a member's timeline and the workspace's types. */
export const activityReadRepo = {
  /**
   * A page of the member's activities, newest first: up to `limit` rows after the cursor, in one
   * statement with the lookup of the member. Undefined when there is no such member.
   */
  async timeline(
    db: SqlClient,
    workspaceId: string,
    memberId: string,
    query: TimelineQuery,
  ): Promise<TimelineRow[] | undefined> {
    const where = [
      query.type === undefined ? Prisma.empty : Prisma.sql`AND t.type = ${query.type}`,
      query.from === undefined ? Prisma.empty : Prisma.sql`AND a.occurred_at >= ${query.from}`,
      query.to === undefined ? Prisma.empty : Prisma.sql`AND a.occurred_at <= ${query.to}`,
      query.after === undefined
        ? Prisma.empty
        : Prisma.sql`AND (a.occurred_at, a.num) < (${query.after.occurredAt}, ${query.after.num}::bigint)`,
    ];
    // The member's row alone when it has none (a LEFT JOIN of the page): no row means no member.
    const rows = await db.$queryRaw<(TimelineRow | { num: null })[]>`
      SELECT p.* FROM members AS m
      LEFT JOIN LATERAL (
        SELECT a.id, t.type, a.occurred_at AS "occurredAt", a.properties, a.num::text AS num
        FROM activities AS a
        JOIN activity_types AS t ON t.workspace_id = a.workspace_id AND t.type_id = a.type_id
        WHERE a.workspace_id = ${workspaceId} AND a.member_seq = m.seq ${Prisma.join(where, " ")}
        ORDER BY a.occurred_at DESC, a.num DESC
        LIMIT ${query.limit}
      ) AS p ON true
      WHERE m.workspace_id = ${workspaceId} AND m.id = ${memberId}`;
    if (rows.length === 0) return undefined;
    return rows.filter((row): row is TimelineRow => row.num !== null);
  },

  /** The types with activities stored now, in byte order. */
  types(db: SqlClient, workspaceId: string): Promise<TypeRow[]> {
    return db.$queryRaw<TypeRow[]>`
      SELECT type, count::float8 AS count, last_at AS "lastAt", properties FROM activity_types
      WHERE workspace_id = ${workspaceId} AND count > 0 ORDER BY type`;
  },
};

export type ActivityReadRepo = typeof activityReadRepo;

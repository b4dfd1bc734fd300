import { Prisma } from "../../../generated/prisma/client.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";

export interface FeedPage {
  /** The events, in sequence order, as the feed shows them. */
  events: (Record<string, unknown> & { sequence: number })[];
  lastSequence: number;
  firstRetained: number;
}

/** The event feed's reads: pages of the events the relay published (event-repo.ts), and the head. */
export const eventFeedRepo = {
  /** A page of the feed after a sequence, with the head and the first event still kept. */
  async page(
    db: SqlClient,
    workspaceId: string,
    query: {
      after: number;
      /** Instead of after: the events up to this sequence, newest first. */
      before?: number | undefined;
      limit: number;
      types?: readonly string[] | undefined;
      audienceId?: string | undefined;
    },
  ): Promise<FeedPage> {
    const newestFirst = query.before !== undefined;
    const range = newestFirst
      ? Prisma.sql`e.sequence <= ${query.before}::bigint`
      : Prisma.sql`e.sequence > ${query.after}::bigint`;
    const order = newestFirst ? Prisma.sql`DESC` : Prisma.sql`ASC`;
    const types = query.types ? Prisma.sql`AND e.type = ANY(${[...query.types]}::text[])` : Prisma.empty;
    const audience = query.audienceId ? Prisma.sql`AND e.audience_id = ${query.audienceId}` : Prisma.empty;
    // The page is built as one JSON document by the database: a hundred events with their id
    // lists cost less as one text value than as rows converted column by column.
    const [row] = await db.$queryRaw<
      { lastSequence: number | null; firstRetained: number | null; events: string | null }[]
    >`
      SELECT h.last_sequence::float8 AS "lastSequence", h.first_retained::float8 AS "firstRetained",
        (SELECT json_agg(json_build_object('id', p.id, 'type', p.type, 'sequence', p.sequence,
                 'createdAt', to_char(p.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                 'data', p.data) ORDER BY p.sequence ${order})::text
         FROM (
           SELECT e.id, e.type, e.sequence, e.created_at, e.data FROM events AS e
           WHERE e.workspace_id = ${workspaceId} AND ${range} ${types} ${audience}
           ORDER BY e.sequence ${order} LIMIT ${query.limit + 1}
         ) AS p) AS events
      FROM event_heads AS h WHERE h.workspace_id = ${workspaceId}`;
    return {
      events: row?.events ? JSON.parse(row.events) : [],
      lastSequence: row?.lastSequence ?? 0,
      firstRetained: row?.firstRetained ?? 1,
    };
  },

  /** The workspace's head: the last sequence published. */
  async head(db: SqlClient, workspaceId: string): Promise<number> {
    const [row] = await db.$queryRaw<{ lastSequence: number }[]>`
      SELECT last_sequence::float8 AS "lastSequence" FROM event_heads WHERE workspace_id = ${workspaceId}`;
    return row?.lastSequence ?? 0;
  },
};

export type EventFeedRepo = typeof eventFeedRepo;

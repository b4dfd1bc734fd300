import { Prisma } from "../../../generated/prisma/client.ts";
import type { Tx } from "../../platform/db/database.ts";
import { jsonRows } from "../../platform/db/json-rows.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";
import { base64Of, chunkBytes } from "../membership/member-bits-sql.ts";
import { seqRange } from "../membership/member-set.ts";
import type { EventType } from "../membership/outbox-entries.ts";

type Reader = SqlClient;

export interface OutboxRow {
  id: bigint;
  type: EventType;
  audienceId: string | null;
  data: Record<string, unknown>;
  createdAt: Date;
}

/** An event ready to publish: its id, sequence and content. */
export interface PublishedEvent {
  sequence: number;
  id: string;
  type: EventType;
  audienceId: string | null;
  data: Record<string, unknown>;
  createdAt: Date;
}

export interface FeedPage {
  /** The events, in sequence order, as the feed shows them. */
  events: (Record<string, unknown> & { sequence: number })[];
  lastSequence: number;
  firstRetained: number;
}

/**
 * The event feed: the relay's statements, which publish outbox entries as events under the
 * workspace's head lock, and the feed's reads.
 */
export const eventRepo = {
  /** Workspaces with entries to publish (at most `limit` of them). */
  async pendingWorkspaces(db: Reader, limit: number): Promise<string[]> {
    const rows = await db.$queryRaw<{ workspaceId: string }[]>`
      SELECT DISTINCT workspace_id AS "workspaceId" FROM event_outbox LIMIT ${limit}`;
    return rows.map((row) => row.workspaceId);
  },

  /**
   * Locks the workspace's head for publishing, for the rest of the transaction; undefined when
   * another relay holds it (that one publishes what is pending).
   */
  async lockHead(tx: Tx, workspaceId: string): Promise<{ lastSequence: number } | undefined> {
    const [row] = await tx.$queryRaw<{ lastSequence: number }[]>`
      SELECT last_sequence::float8 AS "lastSequence" FROM event_heads
      WHERE workspace_id = ${workspaceId} FOR UPDATE SKIP LOCKED`;
    return row;
  },

  /** The oldest entries to publish, in the order they were recorded. */
  readEntries(tx: Tx, workspaceId: string, limit: number): Promise<OutboxRow[]> {
    return tx.$queryRaw<OutboxRow[]>`
      SELECT id, type, audience_id AS "audienceId", data, created_at AS "createdAt" FROM event_outbox
      WHERE workspace_id = ${workspaceId} ORDER BY id LIMIT ${limit}`;
  },

  /**
   * The first `limit` chunks of each entry's member sets (part 0 before part 1, chunks in order),
   * for several entries in one statement; an entry with none is absent from the map.
   */
  async readChunks(
    tx: Tx,
    workspaceId: string,
    outboxIds: bigint[],
    limit: number,
  ): Promise<Map<bigint, { part: number; chunk: number; bytes: Uint8Array }[]>> {
    const chunks = new Map<bigint, { part: number; chunk: number; bytes: Uint8Array }[]>();
    if (outboxIds.length === 0) return chunks;
    const rows = await tx.$queryRaw<{ outboxId: string; part: number; chunk: number; bits: string }[]>`
      SELECT e.id::text AS "outboxId", t.part::int AS part, t.chunk, ${base64Of(Prisma.sql`t.bits`)} AS bits
      FROM unnest(${outboxIds.map(String)}::bigint[]) AS e(id)
      CROSS JOIN LATERAL (
        SELECT t.part, t.chunk, t.bits FROM event_outbox_members AS t
        WHERE t.workspace_id = ${workspaceId} AND t.outbox_id = e.id
        ORDER BY t.part, t.chunk LIMIT ${limit}
      ) AS t
      ORDER BY e.id, t.part, t.chunk`;
    for (const row of rows) {
      const id = BigInt(row.outboxId);
      const list = chunks.get(id) ?? [];
      list.push({ part: row.part, chunk: row.chunk, bytes: chunkBytes(row.bits) });
      chunks.set(id, list);
    }
    return chunks;
  },

  /** Forgets chunks of an entry that were published. */
  async deleteChunks(tx: Tx, workspaceId: string, outboxId: bigint, chunks: { part: number; chunk: number }[]) {
    if (chunks.length === 0) return;
    await tx.$executeRaw`
      DELETE FROM event_outbox_members AS t USING ${jsonRows("v", { part: chunks.map((c) => c.part), chunk: chunks.map((c) => c.chunk) })}
      WHERE t.workspace_id = ${workspaceId} AND t.outbox_id = ${outboxId}
        AND t.part = v.part::int AND t.chunk = v.chunk::int`;
  },

  /**
   * The ids of these member numbers, of members that exist or were deleted (tombstones). Few
   * numbers are looked up one by one in the primary key; a dense range is read as a range.
   */
  async idsOf(tx: Tx, workspaceId: string, seqs: number[]): Promise<Map<number, string>> {
    if (seqs.length === 0) return new Map();
    const [low, high] = seqRange(seqs);
    const dense = seqs.length * 4 > high - low + 1;
    const where = dense
      ? Prisma.sql`t.workspace_id = ${workspaceId} AND t.seq BETWEEN ${low}::int AND ${high}::int`
      : Prisma.sql`t.workspace_id = ${workspaceId} AND t.seq IN (SELECT v.seq::int FROM ${jsonRows("v", { seq: seqs })})`;
    const rows = await tx.$queryRaw<{ seq: number; id: string }[]>`
      SELECT t.seq, t.id FROM members AS t WHERE ${where}
      UNION ALL
      SELECT t.seq, t.id FROM member_tombstones AS t WHERE ${where}`;
    return new Map(rows.map((row) => [row.seq, row.id]));
  },

  /**
   * Publishes events (their sequences follow the head's), queues a delivery of each to every
   * enabled webhook that selects it, moves the head, and deletes the outbox entries `done` they
   * came from, with their member chunks; when the relay has `drained` the outbox, also what
   * dropTombstonesIfIdle drops. One statement: the relay runs after every write. Returns how many
   * deliveries it queued.
   */
  async publish(
    tx: Tx,
    workspaceId: string,
    events: PublishedEvent[],
    { done, drained }: { done: bigint[]; drained: boolean },
  ): Promise<number> {
    const last = events.at(-1);
    const rows = events.map((e) => ({
      sequence: e.sequence,
      id: e.id,
      type: e.type,
      audience_id: e.audienceId,
      data: e.data,
      created_at: e.createdAt.toISOString(),
    }));
    const doneIds = done.map(String);
    const [row] = await tx.$queryRaw<{ deliveries: number }[]>`
      WITH ev AS MATERIALIZED (
        SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
          AS e(sequence bigint, id text, type text, audience_id text, data jsonb, created_at timestamptz)
      ),
      published AS (
        INSERT INTO events (workspace_id, sequence, id, type, audience_id, data, created_at)
        SELECT ${workspaceId}, sequence, id, type, audience_id, data, created_at FROM ev
      ),
      queued AS (
        INSERT INTO webhook_deliveries (workspace_id, id, webhook_id, event_sequence, event_id, event_type, next_attempt_at)
        SELECT ${workspaceId}, 'dlv_' || substr(w.id, 5) || '_' || ev.sequence, w.id, ev.sequence, ev.id, ev.type, now()
        FROM ev JOIN webhooks AS w ON w.workspace_id = ${workspaceId} AND w.enabled
          AND (w.types IS NULL OR ev.type = ANY(w.types))
          AND (w.audience_ids IS NULL OR ev.audience_id = ANY(w.audience_ids))
        RETURNING 1
      ),
      moved AS (
        UPDATE event_heads SET last_sequence = ${last?.sequence ?? 0}::bigint
        WHERE workspace_id = ${workspaceId} AND ${last !== undefined}
      ),
      removed AS (
        DELETE FROM event_outbox WHERE workspace_id = ${workspaceId} AND id = ANY(${doneIds}::bigint[])
      ),
      -- An entry's member chunks go with it (no foreign key deletes them: see schema.prisma).
      removed_members AS (
        DELETE FROM event_outbox_members WHERE workspace_id = ${workspaceId} AND outbox_id = ANY(${doneIds}::bigint[])
      ),
      -- The statement sees the outbox as it was before "removed": idle means nothing but those.
      forgotten AS (
        DELETE FROM member_tombstones WHERE ${drained} AND workspace_id = ${workspaceId}
          AND NOT EXISTS (
            SELECT 1 FROM event_outbox WHERE workspace_id = ${workspaceId} AND id <> ALL(${doneIds}::bigint[])
          )
      )
      SELECT count(*)::int AS deliveries FROM queued`;
    return row?.deliveries ?? 0;
  },

  /** With nothing left to publish, no entry can name a deleted member: forget their numbers. */
  async dropTombstonesIfIdle(tx: Tx, workspaceId: string): Promise<void> {
    await tx.$executeRaw`
      DELETE FROM member_tombstones WHERE workspace_id = ${workspaceId}
        AND NOT EXISTS (SELECT 1 FROM event_outbox WHERE workspace_id = ${workspaceId})`;
  },

  /** A page of the feed after a sequence, with the head and the first event still kept. */
  async page(
    db: Reader,
    workspaceId: string,
    query: { after: number; limit: number; types?: readonly string[] | undefined; audienceId?: string | undefined },
  ): Promise<FeedPage> {
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
                 'data', p.data) ORDER BY p.sequence)::text
         FROM (
           SELECT e.id, e.type, e.sequence, e.created_at, e.data FROM events AS e
           WHERE e.workspace_id = ${workspaceId} AND e.sequence > ${query.after}::bigint ${types} ${audience}
           ORDER BY e.sequence LIMIT ${query.limit + 1}
         ) AS p) AS events
      FROM event_heads AS h WHERE h.workspace_id = ${workspaceId}`;
    return {
      events: row?.events ? JSON.parse(row.events) : [],
      lastSequence: row?.lastSequence ?? 0,
      firstRetained: row?.firstRetained ?? 1,
    };
  },

  /** The workspace's head: the last sequence published. */
  async head(db: Reader, workspaceId: string): Promise<number> {
    const [row] = await db.$queryRaw<{ lastSequence: number }[]>`
      SELECT last_sequence::float8 AS "lastSequence" FROM event_heads WHERE workspace_id = ${workspaceId}`;
    return row?.lastSequence ?? 0;
  },

  /**
   * Removes events (and deliveries) older than the cutoff, across workspaces, and moves each
   * workspace's first retained sequence past them. Returns how many events it removed.
   */
  async purgeBefore(db: Reader, cutoff: Date): Promise<number> {
    const [row] = await db.$queryRaw<{ removed: number }[]>`
      WITH gone AS (
        DELETE FROM events WHERE created_at < ${cutoff} RETURNING workspace_id, sequence
      ),
      moved AS (
        UPDATE event_heads AS h SET first_retained = g.last + 1
        FROM (SELECT workspace_id, max(sequence) AS last FROM gone GROUP BY workspace_id) AS g
        WHERE h.workspace_id = g.workspace_id AND h.first_retained <= g.last
      ),
      forgotten AS (
        DELETE FROM webhook_deliveries WHERE created_at < ${cutoff} AND status <> 'pending'
      )
      SELECT count(*)::int AS removed FROM gone`;
    return row?.removed ?? 0;
  },
};

export type EventRepo = typeof eventRepo;

import { Prisma } from "../../../generated/prisma/client.ts";

import { jsonRows } from "../../platform/db/json-rows.ts";
import { sqlState } from "../../platform/db/pg-errors.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";
import { base64Of, chunkBytes } from "../membership/member-bits-sql.ts";
import { CHUNK_BITS } from "../membership/member-set.ts";
import type { EventType } from "../membership/outbox-entries.ts";

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

/** A chunk of an outbox entry's member set: part 0 entered (or created), part 1 left. */
export interface OutboxChunk {
  part: number;
  chunk: number;
  bytes: Uint8Array;
}

/** What a relay transaction reads under the head's lock (eventRepo.lockAndRead). */
export interface RelayRead {
  lastSequence: number;
  entries: OutboxRow[];
  chunks: Map<bigint, OutboxChunk[]>;
  /** The ids of the member numbers of the chunks to publish now. */
  names: Map<number, string>;
  /** Whether an enabled webhook may select events of the entries read (see lockAndRead). */
  webhooks: boolean;
}

/**
 * The SQLSTATE publish fails with when some of what it was to delete is gone: another relay
 * published it after this one read it (migration relay_published_meanwhile). Of no class of
 * PostgreSQL's, so neither a retry of store.transaction (pg-errors.ts isRetryable) nor a fault.
 */
export const PUBLISHED_MEANWHILE = "EV001";

/**
 * Whether webhook w receives an event of `row`'s type and audience: the one statement of which
 * webhooks select an event, used by the queueing of deliveries and by the read that says whether
 * the deliverer is to be told (an event has its outbox entry's type and audience).
 */
const selects = (workspaceId: string, row: Prisma.Sql) => Prisma.sql`
  w.workspace_id = ${workspaceId} AND w.enabled
  AND (w.types IS NULL OR ${row}.type = ANY(w.types))
  AND (w.audience_ids IS NULL OR ${row}.audience_id = ANY(w.audience_ids))`;

/** Whether a relay transaction failed because entries it read were published meanwhile. */
export const publishedMeanwhile = (error: unknown): boolean => sqlState(error) === PUBLISHED_MEANWHILE;

/**
 * The relay's statements, which publish outbox entries as events under the workspace's head
 * lock, and the retention of events (the feed's reads are event-feed-repo.ts's).
 */
export const eventRepo = {
  /** Workspaces with entries to publish (at most `limit` of them). */
  async pendingWorkspaces(db: SqlClient, limit: number): Promise<string[]> {
    const rows = await db.$queryRaw<{ workspaceId: string }[]>`
      SELECT DISTINCT workspace_id AS "workspaceId" FROM event_outbox LIMIT ${limit}`;
    return rows.map((row) => row.workspaceId);
  },

  /**
   * Locks the workspace's head for publishing, for the rest of the transaction, and reads the
   * oldest `entryLimit` entries to publish (in the order they were recorded), the first
   * `chunkLimit` chunks of their member sets (entry by entry, part 0 before part 1, chunks in
   * order; an entry with none is absent from the map), and the ids of the members of the first
   * `namedChunks` of those chunks (members that exist, or deleted ones by their tombstones).
   * Undefined when another relay holds the head (that one publishes what is pending).
   *
   * One statement, so the entries are read from a snapshot taken before the lock was granted: a
   * relay that committed in between may have published some of them already. publish finds that
   * out (it deletes what it publishes, and counts what it deleted). The names ride in the same
   * statement: a chunk with few members is looked up number by number in the primary key, a
   * fuller one read as its range of numbers; they come back as two JSON arrays (the same rows, in
   * the same order), not a row each, which on the embedded store cost 3–5× the query.
   *
   * `webhooks` says whether an enabled webhook selects the type and audience of any entry read:
   * an event has its entry's type and audience (outbox-entries.ts), and what is published is a
   * prefix of the entries read, so it is true whenever publish queues a delivery, save for a
   * webhook created between the two statements (the deliverer's sweep finds that delivery).
   */
  async lockAndRead(
    tx: SqlClient,
    workspaceId: string,
    limits: { entries: number; chunks: number; namedChunks: number },
  ): Promise<RelayRead | undefined> {
    const bitsOf = Prisma.raw(String(CHUNK_BITS));
    // A member number's place in its chunk's bits, for the range read.
    const inChunk = (seq: Prisma.Sql) => Prisma.sql`get_bit(c.bits, ${seq} - c.chunk * ${bitsOf}) = 1`;
    type Row = { lastSequence: number | null; entries: string | null; chunks: string | null; webhooks: boolean };
    const [row] = await tx.$queryRaw<(Row & { seqs: string | null; ids: string | null })[]>`
      WITH head AS MATERIALIZED (
        SELECT last_sequence FROM event_heads WHERE workspace_id = ${workspaceId} FOR UPDATE SKIP LOCKED
      ),
      entries AS MATERIALIZED (
        SELECT o.id, o.type, o.audience_id, o.data, o.created_at FROM event_outbox AS o
        WHERE o.workspace_id = ${workspaceId} AND EXISTS (SELECT 1 FROM head) ORDER BY o.id LIMIT ${limits.entries}
      ),
      chunks AS MATERIALIZED (
        SELECT t.outbox_id, t.part::int AS part, t.chunk, t.bits FROM event_outbox_members AS t
        WHERE t.workspace_id = ${workspaceId} AND t.outbox_id IN (SELECT e.id FROM entries AS e)
        ORDER BY t.outbox_id, t.part, t.chunk LIMIT ${limits.chunks}
      ),
      named AS MATERIALIZED (
        SELECT c.chunk, c.bits FROM chunks AS c ORDER BY c.outbox_id, c.part, c.chunk LIMIT ${limits.namedChunks}
      ),
      -- A sparse chunk's numbers from its nonzero 64-bit words (its text split cost 8,192 elements).
      sparse AS MATERIALIZED (
        SELECT c.chunk * ${bitsOf} + w.i * 64 + b.j AS seq
        FROM named AS c
        CROSS JOIN LATERAL (
          SELECT w.i, substring(c.bits FROM w.i * 64 + 1 FOR 64) AS word
          FROM generate_series(0, ${bitsOf} / 64 - 1) AS w(i) OFFSET 0
        ) AS w
        CROSS JOIN LATERAL generate_series(0, 63) AS b(j)
        WHERE bit_count(c.bits) * 4 <= ${bitsOf} AND w.word <> B'0'::bit(64) AND get_bit(w.word, b.j) = 1
      ),
      names AS (
        SELECT m.seq, m.id FROM sparse AS s
        CROSS JOIN LATERAL (
          SELECT m.seq, m.id FROM members AS m WHERE m.workspace_id = ${workspaceId} AND m.seq = s.seq::int OFFSET 0
        ) AS m
        UNION ALL
        SELECT m.seq, m.id FROM named AS c
        CROSS JOIN LATERAL (
          SELECT m.seq, m.id FROM members AS m
          WHERE m.workspace_id = ${workspaceId}
            AND m.seq BETWEEN c.chunk * ${bitsOf} AND c.chunk * ${bitsOf} + ${bitsOf} - 1 OFFSET 0
        ) AS m
        WHERE bit_count(c.bits) * 4 > ${bitsOf} AND ${inChunk(Prisma.sql`m.seq`)}
        UNION ALL -- Tombstones are few: each named chunk's are read as its range.
        SELECT t.seq, t.id FROM named AS c
        JOIN member_tombstones AS t ON t.workspace_id = ${workspaceId}
          AND t.seq BETWEEN c.chunk * ${bitsOf} AND c.chunk * ${bitsOf} + ${bitsOf} - 1
        WHERE ${inChunk(Prisma.sql`t.seq`)}
      )
      SELECT (SELECT h.last_sequence::float8 FROM head AS h) AS "lastSequence",
        (SELECT json_agg(json_build_array(e.id::text, e.type, e.audience_id, e.data,
           floor(extract(epoch FROM e.created_at) * 1000)) ORDER BY e.id)::text FROM entries AS e) AS entries,
        (SELECT json_agg(json_build_array(c.outbox_id::text, c.part, c.chunk, ${base64Of(Prisma.sql`c.bits`)})
           ORDER BY c.outbox_id, c.part, c.chunk)::text FROM chunks AS c) AS chunks,
        nm.seqs, nm.ids,
        EXISTS (
          SELECT 1 FROM entries AS e JOIN webhooks AS w ON ${selects(workspaceId, Prisma.sql`e`)}
        ) AS webhooks
      FROM (SELECT json_agg(n.seq)::text AS seqs, json_agg(n.id)::text AS ids FROM names AS n) AS nm`;
    if (row?.lastSequence === null || row?.lastSequence === undefined) return undefined;
    const entries = (
      JSON.parse(row.entries ?? "[]") as [string, EventType, string | null, Record<string, unknown>, number][]
    ).map(([id, type, audienceId, data, createdAt]) => ({
      id: BigInt(id),
      type,
      audienceId,
      data,
      createdAt: new Date(createdAt),
    }));
    const chunks = new Map<bigint, OutboxChunk[]>();
    for (const [outboxId, part, chunk, bits] of JSON.parse(row.chunks ?? "[]") as [string, number, number, string][]) {
      const id = BigInt(outboxId);
      const list = chunks.get(id) ?? [];
      list.push({ part, chunk, bytes: chunkBytes(bits) });
      chunks.set(id, list);
    }
    const numbers = JSON.parse(row.seqs ?? "[]") as number[];
    const ids = JSON.parse(row.ids ?? "[]") as string[];
    const names = new Map(numbers.map((seq, i) => [seq, ids[i] as string]));
    return { lastSequence: row.lastSequence, entries, chunks, names, webhooks: row.webhooks };
  },

  /**
   * Publishes events (their sequences follow the head's), queues a delivery of each to every
   * enabled webhook that selects it, moves the head, and deletes the outbox entries `done` they
   * came from, with their member chunks, and the chunks `taken` of an entry published in part;
   * when the relay has `drained` the outbox, also what dropTombstonesIfIdle drops. One statement:
   * the relay runs after every write. It answers nothing, so that it can be sent with the COMMIT
   * (withCommit): when it did not delete everything it was to delete, another relay published
   * some of it after this one's entries were read, and it fails (publishedMeanwhile), so that the
   * transaction does not commit.
   */
  async publish(
    tx: SqlClient,
    workspaceId: string,
    events: PublishedEvent[],
    {
      done,
      drained,
      taken,
    }: { done: bigint[]; drained: boolean; taken?: { outboxId: bigint; chunks: { part: number; chunk: number }[] } },
  ): Promise<void> {
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
    const takenChunks = taken?.chunks ?? [];
    await tx.$executeRaw`
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
        FROM ev JOIN webhooks AS w ON ${selects(workspaceId, Prisma.sql`ev`)}
      ),
      moved AS (
        UPDATE event_heads SET last_sequence = ${last?.sequence ?? 0}::bigint
        WHERE workspace_id = ${workspaceId} AND ${last !== undefined}
      ),
      removed AS (
        DELETE FROM event_outbox WHERE workspace_id = ${workspaceId} AND id = ANY(${doneIds}::bigint[]) RETURNING 1
      ),
      -- An entry's member chunks go with it (no foreign key deletes them: see schema.prisma).
      removed_members AS (
        DELETE FROM event_outbox_members WHERE workspace_id = ${workspaceId} AND outbox_id = ANY(${doneIds}::bigint[])
      ),
      -- The chunks published of an entry that continues in the next transaction.
      removed_taken AS (
        DELETE FROM event_outbox_members AS t
        USING ${jsonRows("v", { part: takenChunks.map((c) => c.part), chunk: takenChunks.map((c) => c.chunk) })}
        WHERE t.workspace_id = ${workspaceId} AND t.outbox_id = ${taken?.outboxId ?? 0n}
          AND t.part = v.part::int AND t.chunk = v.chunk::int
        RETURNING 1
      ),
      -- The statement sees the outbox as it was before "removed": idle means nothing but those.
      forgotten AS (
        DELETE FROM member_tombstones WHERE ${drained} AND workspace_id = ${workspaceId}
          AND NOT EXISTS (
            SELECT 1 FROM event_outbox WHERE workspace_id = ${workspaceId} AND id <> ALL(${doneIds}::bigint[])
          )
      )
      -- Called only when something was gone: the whole statement fails, and with it the commit.
      SELECT relay_published_meanwhile()
      WHERE (SELECT count(*) FROM removed) <> ${done.length}::int
        OR (SELECT count(*) FROM removed_taken) <> ${takenChunks.length}::int`;
  },

  /** With nothing left to publish, no entry can name a deleted member: forget their numbers. */
  async dropTombstonesIfIdle(tx: SqlClient, workspaceId: string): Promise<void> {
    await tx.$executeRaw`
      DELETE FROM member_tombstones WHERE workspace_id = ${workspaceId}
        AND NOT EXISTS (SELECT 1 FROM event_outbox WHERE workspace_id = ${workspaceId})`;
  },

  /**
   * Removes events (and deliveries) older than the cutoff, across workspaces, and moves each
   * workspace's first retained sequence past them. Returns how many events it removed.
   */
  async purgeBefore(db: SqlClient, cutoff: Date): Promise<number> {
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

import { Prisma } from "../../../generated/prisma/client.ts";

import type { SqlClient } from "../../platform/db/sql-client.ts";
import type { ImportKind } from "./import-reader.ts";

export type ImportStatus = "queued" | "running" | "succeeded" | "failed" | "cancelled";

export interface ImportError {
  line: number;
  message: string;
}

export interface ImportRow {
  id: string;
  kind: ImportKind;
  audienceId: string | null;
  status: ImportStatus;
  bytes: number;
  rowsRead: number;
  created: number;
  merged: number;
  unchanged: number;
  accepted: number;
  duplicates: number;
  expired: number;
  rejected: number;
  errors: ImportError[];
  failureReason: string | null;
  /** The file's name, as the client gave it. */
  name: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

/** The counts a job has reached: what its committed chunks applied. */
export type ImportProgress = Pick<
  ImportRow,
  "rowsRead" | "created" | "merged" | "unchanged" | "accepted" | "duplicates" | "expired" | "rejected"
>;

/** A job a runner has claimed: where it starts again, and how many errors it already keeps. */
export interface ClaimedImport extends ImportProgress {
  workspaceId: string;
  id: string;
  kind: ImportKind;
  audienceId: string | null;
  parts: number;
  errorCount: number;
}

/** Who holds a job: the claim's random token, renewed until leaseMs from now at each step. */
export interface Lease {
  token: string;
  leaseMs: number;
}

const COLUMNS =
  Prisma.raw(`id, kind, audience_id AS "audienceId", status, bytes::float8 AS bytes, rows_read AS "rowsRead",
  created, merged, unchanged, accepted, duplicates, expired, rejected, errors, failure_reason AS "failureReason", name, created_at AS "createdAt",
  finished_at AS "finishedAt"`);

// clock_timestamp, not now(): a chunk's transaction can outlast the lease it renews, and now() is
// when that transaction began.
const leaseEnd = (lease: Lease) => Prisma.sql`clock_timestamp() + make_interval(secs => ${lease.leaseMs / 1000})`;

/** Import jobs and their files. A job is 'uploading' (invisible to clients) until its file is whole. */
export const importRepo = {
  /**
   * Adds an upload's job unless the workspace already has `limit` jobs that have not ended; false
   * then. The workspace's uploads take a lock of their own (an advisory one, held to the end of
   * the transaction) before counting: concurrent uploads count and insert one at a time, so the
   * limit holds however many arrive at once, and member writes (which lock the workspace's row)
   * are not waited for.
   */
  async begin(
    tx: SqlClient,
    job: { workspaceId: string; id: string; kind: ImportKind; audienceId: string | null; name: string | null },
    limit: number,
  ): Promise<boolean> {
    const { workspaceId, id, kind, audienceId, name } = job;
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`import uploads ${workspaceId}`}, 0))`;
    const inserted = await tx.$executeRaw`
      INSERT INTO import_jobs (workspace_id, id, kind, audience_id, name)
      SELECT ${workspaceId}, ${id}, ${kind}, ${audienceId}, ${name}
      WHERE (SELECT count(*) FROM import_jobs
             WHERE workspace_id = ${workspaceId} AND status IN ('uploading', 'queued', 'running')) < ${limit}`;
    return inserted > 0;
  },

  /**
   * Stores the next part of an upload; the job's updated_at shows the upload is alive. Parts
   * travel as base64 text: the embedded store's driver passes a bytea parameter byte by byte
   * (ten times slower than as text).
   */
  async appendPart(db: SqlClient, workspaceId: string, id: string, part: number, data: Buffer): Promise<void> {
    await db.$executeRaw`
      WITH stored AS (
        INSERT INTO import_parts (workspace_id, import_id, part, data)
        VALUES (${workspaceId}, ${id}, ${part}, decode(${data.toString("base64")}, 'base64'))
      )
      UPDATE import_jobs SET parts = ${part + 1}, bytes = bytes + ${data.length}, updated_at = now()
      WHERE workspace_id = ${workspaceId} AND id = ${id} AND status = 'uploading'`;
  },

  /** The upload is whole: the job waits for a runner. */
  async queue(tx: SqlClient, workspaceId: string, id: string): Promise<ImportRow> {
    const [row] = await tx.$queryRaw<ImportRow[]>`
      UPDATE import_jobs SET status = 'queued', updated_at = now()
      WHERE workspace_id = ${workspaceId} AND id = ${id} AND status = 'uploading'
      RETURNING ${COLUMNS}`;
    if (!row) throw new Error(`import ${id} is no longer being uploaded`);
    return row;
  },

  /** Removes an upload that failed, with what it stored. */
  async discard(db: SqlClient, workspaceId: string, id: string): Promise<void> {
    await db.$executeRaw`
      DELETE FROM import_jobs WHERE workspace_id = ${workspaceId} AND id = ${id} AND status = 'uploading'`;
  },

  async find(db: SqlClient, workspaceId: string, id: string): Promise<ImportRow | undefined> {
    const [row] = await db.$queryRaw<ImportRow[]>`
      SELECT ${COLUMNS} FROM import_jobs
      WHERE workspace_id = ${workspaceId} AND id = ${id} AND status <> 'uploading'`;
    return row;
  },

  list(db: SqlClient, workspaceId: string, limit: number): Promise<ImportRow[]> {
    return db.$queryRaw<ImportRow[]>`
      SELECT ${COLUMNS} FROM import_jobs
      WHERE workspace_id = ${workspaceId} AND status <> 'uploading'
      ORDER BY created_at DESC, id DESC LIMIT ${limit}`;
  },

  /**
   * Cancels a job that has not ended, and removes its file; waits for the chunk being applied
   * (its transaction holds the job's row), so the counts returned are what was applied.
   * Undefined when the job is not there or already ended.
   */
  async cancel(tx: SqlClient, workspaceId: string, id: string): Promise<ImportRow | undefined> {
    const [row] = await tx.$queryRaw<ImportRow[]>`
      WITH ended AS (
        UPDATE import_jobs SET status = 'cancelled', finished_at = now(), updated_at = now()
        WHERE workspace_id = ${workspaceId} AND id = ${id} AND status IN ('queued', 'running')
        RETURNING ${COLUMNS}
      ),
      gone AS (
        DELETE FROM import_parts AS p USING ended WHERE p.workspace_id = ${workspaceId} AND p.import_id = ended.id
      )
      SELECT * FROM ended`;
    return row;
  },

  /**
   * Claims the oldest job waiting for a runner, across workspaces: a queued one, or a running
   * one whose runner's lease ran out (its process died); none of a workspace that has a job
   * running under a live lease, so that its jobs run one at a time and leave the other workers
   * to other workspaces (two processes claiming at the same instant may still start two of a
   * workspace: harmless, their chunks take the workspace's member lock in turn). SKIP LOCKED:
   * processes claim different jobs, and a job whose chunk is being committed is not taken from
   * under it.
   */
  async claim(db: SqlClient, lease: Lease): Promise<ClaimedImport | undefined> {
    const [row] = await db.$queryRaw<ClaimedImport[]>`
      WITH next AS (
        SELECT j.workspace_id, j.id FROM import_jobs AS j
        WHERE j.status IN ('queued', 'running') AND (j.leased_until IS NULL OR j.leased_until < now())
          AND NOT EXISTS (
            SELECT 1 FROM import_jobs AS r
            WHERE r.workspace_id = j.workspace_id AND r.status = 'running' AND r.leased_until >= now())
        ORDER BY j.status DESC, j.created_at
        LIMIT 1
        FOR UPDATE OF j SKIP LOCKED
      )
      UPDATE import_jobs AS j
      SET status = 'running', lease_token = ${lease.token}, leased_until = ${leaseEnd(lease)}, updated_at = now()
      FROM next WHERE j.workspace_id = next.workspace_id AND j.id = next.id
      RETURNING j.workspace_id AS "workspaceId", j.id, j.kind, j.audience_id AS "audienceId", j.parts,
        j.rows_read AS "rowsRead", j.created, j.merged, j.unchanged, j.accepted, j.duplicates, j.expired, j.rejected,
        jsonb_array_length(j.errors) AS "errorCount"`;
    return row;
  },

  /** Extends the lease; false when the job is no longer this runner's. */
  async renew(db: SqlClient, job: Pick<ClaimedImport, "workspaceId" | "id">, lease: Lease): Promise<boolean> {
    const updated = await db.$executeRaw`
      UPDATE import_jobs SET leased_until = ${leaseEnd(lease)}
      WHERE workspace_id = ${job.workspaceId} AND id = ${job.id} AND lease_token = ${lease.token}`;
    return updated > 0;
  },

  /**
   * Ends every lease (a store only this process can open: any lease is a dead process's), so
   * interrupted jobs resume at once instead of when their leases run out.
   */
  async releaseAll(db: SqlClient): Promise<void> {
    await db.$executeRaw`UPDATE import_jobs SET leased_until = NULL WHERE status = 'running' AND leased_until IS NOT NULL`;
  },

  /** Gives the job up now (not at the lease's end), so a runner can take it again at once. */
  async release(db: SqlClient, job: Pick<ClaimedImport, "workspaceId" | "id">, lease: Lease): Promise<void> {
    await db.$executeRaw`
      UPDATE import_jobs SET leased_until = now()
      WHERE workspace_id = ${job.workspaceId} AND id = ${job.id} AND lease_token = ${lease.token}`;
  },

  /**
   * Locks the job's row for a chunk's transaction, if this runner still holds it: its status
   * ('running', or 'cancelled' meanwhile), or undefined when another runner took it over.
   */
  async hold(tx: SqlClient, job: Pick<ClaimedImport, "workspaceId" | "id">, lease: Lease): Promise<string | undefined> {
    const [row] = await tx.$queryRaw<{ status: string }[]>`
      SELECT status FROM import_jobs
      WHERE workspace_id = ${job.workspaceId} AND id = ${job.id} AND lease_token = ${lease.token}
      FOR UPDATE`;
    return row?.status;
  },

  /** Records a chunk's progress in its transaction (the caller holds the job: hold()). */
  async advance(
    tx: SqlClient,
    job: Pick<ClaimedImport, "workspaceId" | "id">,
    lease: Lease,
    progress: ImportProgress,
    newErrors: ImportError[],
  ): Promise<void> {
    await tx.$executeRaw`
      UPDATE import_jobs SET rows_read = ${progress.rowsRead}, created = ${progress.created},
        merged = ${progress.merged}, unchanged = ${progress.unchanged}, accepted = ${progress.accepted},
        duplicates = ${progress.duplicates}, expired = ${progress.expired}, rejected = ${progress.rejected},
        errors = errors || ${JSON.stringify(newErrors)}::jsonb, leased_until = ${leaseEnd(lease)}, updated_at = now()
      WHERE workspace_id = ${job.workspaceId} AND id = ${job.id} AND lease_token = ${lease.token}`;
  },

  /** Ends a running job this runner holds (succeeded or failed) and removes its file. */
  async finish(
    tx: SqlClient,
    job: Pick<ClaimedImport, "workspaceId" | "id">,
    lease: Lease,
    outcome: { status: "succeeded" } | { status: "failed"; reason: string },
  ): Promise<void> {
    const reason = outcome.status === "failed" ? outcome.reason : null;
    await tx.$executeRaw`
      WITH ended AS (
        UPDATE import_jobs SET status = ${outcome.status}, failure_reason = ${reason}, finished_at = now(),
          updated_at = now(), lease_token = NULL, leased_until = NULL
        WHERE workspace_id = ${job.workspaceId} AND id = ${job.id} AND lease_token = ${lease.token}
          AND status = 'running'
        RETURNING workspace_id, id
      )
      DELETE FROM import_parts AS p USING ended
      WHERE p.workspace_id = ended.workspace_id AND p.import_id = ended.id`;
  },

  async readPart(db: SqlClient, job: Pick<ClaimedImport, "workspaceId" | "id">, part: number): Promise<Buffer> {
    const [row] = await db.$queryRaw<{ data: string }[]>`
      SELECT encode(data, 'base64') AS data FROM import_parts
      WHERE workspace_id = ${job.workspaceId} AND import_id = ${job.id} AND part = ${part}`;
    if (!row) throw new MissingPartError(job.id, part);
    // encode() breaks its output into lines; the decoder skips the line breaks.
    return Buffer.from(row.data, "base64");
  },

  /**
   * Removes uploads whose process died (no part stored since staleBefore) and the files of jobs
   * that ended without their runner removing them; returns how many uploads were removed.
   */
  async sweep(db: SqlClient, staleBefore: Date): Promise<number> {
    await db.$executeRaw`
      DELETE FROM import_parts AS p USING import_jobs AS j
      WHERE j.status IN ('succeeded', 'failed', 'cancelled')
        AND p.workspace_id = j.workspace_id AND p.import_id = j.id`;
    return db.$executeRaw`DELETE FROM import_jobs WHERE status = 'uploading' AND updated_at < ${staleBefore}`;
  },
};

/** A part of a job's file is gone: the job was cancelled (or ended) while it was being read. */
export class MissingPartError extends Error {
  override name = "MissingPartError";
  constructor(id: string, part: number) {
    super(`part ${part} of import ${id} is not stored`);
  }
}

export type ImportRepo = typeof importRepo;

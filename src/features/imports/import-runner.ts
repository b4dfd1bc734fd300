import { setImmediate as nextTurn } from "node:timers/promises";
import { AppError } from "../../domain/errors.ts";
import { randomBase62 } from "../../domain/ids.ts";
import type { Store } from "../../platform/db/database.ts";
import { databaseFault } from "../../platform/db/pg-errors.ts";
import { createWorkLoop } from "../../platform/work-loop.ts";
import { type ChunkApplier, type JobState, LeaseLostError } from "./import-chunk.ts";
import { CsvReadError, type FileRow, headerOf, readCsv } from "./import-reader.ts";
import { type ClaimedImport, type ImportRepo, type Lease, MissingPartError } from "./import-repo.ts";

/** How often queued jobs are looked for besides being poked (a job queued by another process). */
const POLL_MS = 1_000;
const SWEEP_MS = 60_000;
/** An upload that stored nothing for this long belonged to a process that died (see import-service.ts). */
const STALE_UPLOAD_MS = 10 * 60_000;

export interface ImportRunnerDeps {
  store: Pick<Store, "db" | "transaction">;
  imports: Pick<ImportRepo, "claim" | "renew" | "release" | "releaseAll" | "finish" | "readPart" | "sweep">;
  applyChunk: ChunkApplier;
  /** How long a claimed job stays this process's without being renewed (IMPORT_LEASE_MS). */
  leaseMs: number;
  /** No other process can use the store (the embedded one): leases left at start are a dead process's. */
  soleProcess?: boolean;
  /** Rows per chunk: each chunk is one transaction, and the unit a job resumes from. */
  chunkRows: number;
  /** Jobs run at once, each of another workspace. */
  workers: number;
  onError: (error: unknown) => void;
}

/**
 * Runs import jobs in the background of a server process, `workers` at a time, each of another
 * workspace (claim takes no job of a workspace that has one running): a small file of one
 * workspace runs beside another workspace's large one instead of after it, and a workspace's own
 * jobs run one after another, in order. A job is claimed with a lease (a random token, renewed
 * while the job runs) so that several processes share the queue and a job runs in one of them
 * at a time; every chunk commits only if this runner still holds it (import-chunk.ts). A job
 * whose process died is taken over by any process once its lease runs out, and resumes after
 * its last committed chunk.
 */
export function createImportRunner(deps: ImportRunnerDeps) {
  const { store, imports, applyChunk, leaseMs, chunkRows, onError } = deps;
  const { workers } = deps;
  /** The jobs this process is running. */
  const running = new Set<Promise<void>>();
  let stopping = false;
  let sweptAt = 0;
  let leasesChecked = !deps.soleProcess;

  async function* partsOf(job: ClaimedImport): AsyncGenerator<Uint8Array> {
    for (let part = 0; part < job.parts; part++) yield await imports.readPart(store.db, job, part);
  }

  const finish = (job: ClaimedImport, lease: Lease, reason?: string) =>
    store.transaction((tx) =>
      imports.finish(tx, job, lease, reason === undefined ? { status: "succeeded" } : { status: "failed", reason }),
    );

  /** Applies the job's rows from where it stands; false when it must stop before the end. */
  async function applyFile(job: ClaimedImport, lease: Lease, keepGoing: () => boolean): Promise<boolean> {
    const file = readCsv(partsOf(job));
    const first = await file.next();
    const header = headerOf(first.done ? undefined : first.value, job.kind);
    const chunks = chunked(file, job.rowsRead, chunkRows);
    let state: JobState = job;
    try {
      let next = chunks.next();
      for (;;) {
        const { value: rows, done } = await next;
        if (done) return true;
        if (!keepGoing()) return false;
        // The next chunk is parsed while this one is written (with PostgreSQL; the embedded store
        // runs in this thread), and requests get their turn between chunks.
        await nextTurn();
        next = chunks.next();
        next.catch(() => {});
        const after = await applyChunk(job, lease, header, rows, state);
        if (after === "cancelled") return false;
        state = after;
      }
    } finally {
      await chunks.return(undefined).catch(() => {});
      await file.return(undefined).catch(() => {});
    }
  }

  async function runJob(job: ClaimedImport, lease: Lease): Promise<void> {
    let lost = false;
    const heartbeat = setInterval(() => {
      imports.renew(store.db, job, lease).then((held) => {
        lost ||= !held;
      }, onError);
    }, leaseMs / 4);
    heartbeat.unref();
    try {
      const whole = await applyFile(job, lease, () => !lost && !stopping);
      if (whole) await finish(job, lease);
      else if (stopping && !lost) await imports.release(store.db, job, lease);
    } catch (error) {
      if (error instanceof LeaseLostError) return;
      // A fault of the database: the job stays running and is taken up again from its last chunk.
      if (databaseFault(error)) {
        await imports.release(store.db, job, lease).catch(() => {});
        throw error;
      }
      if (error instanceof CsvReadError) return finish(job, lease, error.message);
      if (error instanceof AppError) return finish(job, lease, error.detail);
      // Cancelled while its file was being read: cancelling removed the file.
      if (error instanceof MissingPartError) return finish(job, lease, "The file is no longer stored.");
      onError(error);
      await finish(job, lease, "The import stopped on an unexpected error; the server's log has its details.");
    } finally {
      clearInterval(heartbeat);
    }
  }

  const loop = createWorkLoop({
    intervalMs: POLL_MS,
    onError,
    async run() {
      if (!leasesChecked) {
        await imports.releaseAll(store.db);
        leasesChecked = true;
      }
      if (Date.now() - sweptAt >= SWEEP_MS) {
        await imports.sweep(store.db, new Date(Date.now() - STALE_UPLOAD_MS));
        sweptAt = Date.now();
      }
      while (!stopping && running.size < workers) {
        const lease = { token: randomBase62(20), leaseMs };
        const job = await imports.claim(store.db, lease);
        if (!job) return;
        // A database fault reaches onError as it did the loop's; the job ending frees a worker.
        const work: Promise<void> = runJob(job, lease)
          .catch(onError)
          .finally(() => {
            running.delete(work);
            loop.poke();
          });
        running.add(work);
      }
    },
  });

  return {
    /** A job was queued: look for it now. */
    queued: () => loop.poke(),
    start(): void {
      stopping = false;
      loop.start();
    },
    /** Stops after the chunks being applied; the jobs are released for another process (or the next start). */
    async stop(): Promise<void> {
      stopping = true;
      await loop.stop();
      await Promise.all(running);
    },
  };
}

/**
 * The rows after the first `skip` (applied before a restart), in chunks of `size`. When the file
 * cannot be read on, the rows read before are a last chunk, and then the failure.
 */
async function* chunked(rows: AsyncIterator<FileRow>, skip: number, size: number): AsyncGenerator<FileRow[]> {
  let chunk: FileRow[] = [];
  let seen = 0;
  try {
    for (let next = await rows.next(); !next.done; next = await rows.next()) {
      if (seen++ < skip) continue;
      chunk.push(next.value);
      if (chunk.length === size) {
        yield chunk;
        chunk = [];
      }
    }
  } catch (error) {
    if (chunk.length > 0) yield chunk;
    throw error;
  }
  if (chunk.length > 0) yield chunk;
}

export type ImportRunner = ReturnType<typeof createImportRunner>;

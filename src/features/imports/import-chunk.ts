import type { components } from "../../../generated/api.d.ts";
import { assertNever } from "../../domain/assert-never.ts";
import type { MemberInput } from "../../domain/member-identity.ts";
import { importRows } from "../../platform/metrics.ts";
import type { MembershipService, MembershipWriter } from "../membership/membership-service.ts";
import { type MemberWrites, resolveMemberInputs } from "../membership/upsert/member-resolution.ts";
import { type ActivityColumn, readActivityRow } from "./activity-columns.ts";
import { type Column, readRow } from "./import-columns.ts";
import type { FileHeader, FileRow } from "./import-reader.ts";
import type { ClaimedImport, ImportError, ImportProgress, ImportRepo, Lease } from "./import-repo.ts";

/** A job keeps the first this many rejected rows. */
export const MAX_KEPT_ERRORS = 100;

export interface ChunkDeps<E> {
  membership: Pick<MembershipService, "workspaceWrite">;
  members: MemberWrites;
  imports: Pick<ImportRepo, "hold" | "advance">;
  /** The rules of the JSON API's MemberInput (createMemberInputCheck). */
  checkInput: (input: MemberInput) => string | undefined;
  /** The ingest's check of one entry and its write (activity-service.ts), as the composition root passes them. */
  activities: ActivityWrites<E>;
}

/** How activities come in: each entry checked as an ingest's, then stored by the ingest's own write. */
export interface ActivityWrites<E> {
  now(): number;
  /** The entry as checked, or why the ingest refuses it (a pointer below the entry, and a message). */
  checkOne(entry: unknown, now: number): { checked: E } | { pointer: string; message: string };
  /** Stores checked entries in a write holding the workspace's member lock; what became of them. */
  store(w: MembershipWriter, checked: E[], now: number): Promise<components["schemas"]["IngestActivitiesResult"]>;
}

/** Another runner took the job over (this one's lease ran out): stop, apply nothing more. */
export class LeaseLostError extends Error {
  override name = "LeaseLostError";
}

/** Where a job stands after each chunk: its counts, and how many errors it keeps. */
export interface JobState extends ImportProgress {
  errorCount: number;
}

/** What a chunk's rows did: the counts it adds, and its rejected rows (in any order). */
type Applied = { counts: Partial<Omit<ImportProgress, "rowsRead" | "rejected">>; errors: ImportError[] };

const OUTCOMES = ["created", "merged", "unchanged", "accepted", "duplicates", "expired"] as const;
/** What became of each row, by kind (every row has one): the rows the metric counts. */
const ROW_OUTCOMES = {
  members: ["created", "merged", "unchanged", "rejected"],
  activities: ["accepted", "duplicates", "expired", "rejected"],
} as const satisfies Record<FileHeader["kind"], (keyof ImportProgress)[]>;

/**
 * Applies one chunk of a job's rows as one write, with the job's progress in the same
 * transaction: after a crash the job resumes after the last chunk that committed, so no row is
 * applied twice and none is skipped. Members are applied exactly as addAudienceMembers applies
 * them (identity and merge rules, events, the audience, rule-based audiences following);
 * activities exactly as ingestActivities stores them (its check of each entry, its write). A row
 * that cannot be applied (its cells, a match with two members, an entry the ingest refuses) is
 * rejected by itself with its line.
 */
export function createChunkApplier<E>(deps: ChunkDeps<E>) {
  const { membership, imports } = deps;

  async function applyMembers(w: MembershipWriter, job: ClaimedImport, columns: Column[], rows: FileRow[]) {
    const valid: { line: number; input: MemberInput }[] = [];
    const errors: ImportError[] = [];
    for (const row of rows) {
      const reading =
        row.rejected !== undefined ? { rejected: row.rejected } : readRow(columns, row.values, deps.checkInput);
      if ("input" in reading) valid.push({ line: row.line, input: reading.input });
      else errors.push({ line: row.line, message: reading.rejected });
    }
    if (job.audienceId !== null) await w.writable(job.audienceId);
    const resolved = await resolveMemberInputs(
      deps.members,
      w.tx,
      job.workspaceId,
      valid.map((v) => v.input),
      [],
      { rejectBadInputs: true },
    );
    w.publish(...resolved.events);
    if (job.audienceId !== null && resolved.seqs.length > 0) await w.include(job.audienceId, resolved.seqs);
    await w.followMembers(resolved.changedIds);
    for (const r of resolved.rejected)
      errors.push({ line: (valid[r.index] as { line: number }).line, message: r.message });
    const count = (status: string) => resolved.outcomes.filter((o) => o.status === status).length;
    return {
      counts: { created: count("created"), merged: count("merged"), unchanged: count("unchanged") },
      errors,
    } satisfies Applied;
  }

  async function applyActivities(w: MembershipWriter, columns: ActivityColumn[], rows: FileRow[]) {
    const now = deps.activities.now();
    const checked: E[] = [];
    const errors: ImportError[] = [];
    for (const row of rows) {
      const reading = row.rejected !== undefined ? { rejected: row.rejected } : readActivityRow(columns, row.values);
      if ("rejected" in reading) {
        errors.push({ line: row.line, message: reading.rejected });
        continue;
      }
      const entry = deps.activities.checkOne(reading.entry, now);
      if ("checked" in entry) checked.push(entry.checked);
      else errors.push({ line: row.line, message: `${columnOf(entry.pointer)}${entry.message}` });
    }
    const stored = await deps.activities.store(w, checked, now);
    return {
      counts: {
        created: stored.createdMembers,
        accepted: stored.accepted,
        duplicates: stored.duplicates,
        expired: stored.expired,
      },
      errors,
    } satisfies Applied;
  }

  return async function applyChunk(
    job: ClaimedImport,
    lease: Lease,
    header: FileHeader,
    rows: FileRow[],
    before: JobState,
  ): Promise<JobState | "cancelled"> {
    const result = await membership.workspaceWrite(job.workspaceId, { memberWrites: true }, async (w) => {
      const status = await imports.hold(w.tx, job, lease);
      if (status === undefined) throw new LeaseLostError(`import ${job.id} was taken over by another runner`);
      if (status !== "running") return "cancelled" as const;
      let applied: Applied;
      switch (header.kind) {
        case "members":
          applied = await applyMembers(w, job, header.columns, rows);
          break;
        case "activities":
          applied = await applyActivities(w, header.columns, rows);
          break;
        default:
          return assertNever(header);
      }
      const errors = applied.errors.sort((a, b) => a.line - b.line);
      const kept = errors.slice(0, Math.max(0, MAX_KEPT_ERRORS - before.errorCount));
      const after: JobState = {
        ...before,
        rowsRead: before.rowsRead + rows.length,
        rejected: before.rejected + errors.length,
        errorCount: before.errorCount + kept.length,
      };
      for (const outcome of OUTCOMES) after[outcome] += applied.counts[outcome] ?? 0;
      await imports.advance(w.tx, job, lease, after, kept);
      return after;
    });
    if (result !== "cancelled") {
      // Counted once the chunk has committed (its transaction may have been tried more than once).
      for (const outcome of ROW_OUTCOMES[header.kind]) importRows.inc({ outcome }, result[outcome] - before[outcome]);
    }
    return result;
  };
}

/** The column a refusal's pointer names (`properties/amount` → `properties.amount: `), as member rows say it. */
const columnOf = (pointer: string) => (pointer === "" ? "" : `${pointer.replaceAll("/", ".")}: `);

export type ChunkApplier = ReturnType<typeof createChunkApplier<unknown>>;

import type { MemberInput } from "../../domain/member-identity.ts";
import { importRows } from "../../platform/metrics.ts";
import { type MemberWrites, resolveMemberInputs } from "../membership/member-resolution.ts";
import type { MembershipService } from "../membership/membership-service.ts";
import { type Column, readRow } from "./import-columns.ts";
import type { FileRow } from "./import-reader.ts";
import type { ClaimedImport, ImportError, ImportProgress, ImportRepo, Lease } from "./import-repo.ts";

/** A job keeps the first this many rejected rows. */
export const MAX_KEPT_ERRORS = 100;

export interface ChunkDeps {
  membership: Pick<MembershipService, "write">;
  members: MemberWrites;
  imports: Pick<ImportRepo, "hold" | "advance">;
  /** The rules of the JSON API's MemberInput (createMemberInputCheck). */
  checkInput: (input: MemberInput) => string | undefined;
}

/** Another runner took the job over (this one's lease ran out): stop, apply nothing more. */
export class LeaseLostError extends Error {
  override name = "LeaseLostError";
}

/** Where a job stands after each chunk: its counts, and how many errors it keeps. */
export interface JobState extends ImportProgress {
  errorCount: number;
}

/**
 * Applies one chunk of a job's rows as one write, exactly as addAudienceMembers applies members
 * (identity and merge rules, events, the audience, rule-based audiences following), with the
 * job's progress in the same transaction: after a crash the job resumes after the last chunk
 * that committed, so no row is applied twice and none is skipped. A row that cannot be applied
 * (its cells, or a match with two members) is rejected by itself with its line.
 */
export function createChunkApplier({ membership, members, imports, checkInput }: ChunkDeps) {
  return async function applyChunk(
    job: ClaimedImport,
    lease: Lease,
    columns: Column[],
    rows: FileRow[],
    before: JobState,
  ): Promise<JobState | "cancelled"> {
    const readings = rows.map((row) => ({
      line: row.line,
      reading: row.rejected !== undefined ? { rejected: row.rejected } : readRow(columns, row.values, checkInput),
    }));
    const valid: { line: number; input: MemberInput }[] = [];
    const rejected: ImportError[] = [];
    for (const { line, reading } of readings) {
      if ("input" in reading) valid.push({ line, input: reading.input });
      else rejected.push({ line, message: reading.rejected });
    }
    const result = await membership.write(job.workspaceId, { memberWrites: true }, async (w) => {
      const status = await imports.hold(w.tx, job, lease);
      if (status === undefined) throw new LeaseLostError(`import ${job.id} was taken over by another runner`);
      if (status !== "running") return "cancelled" as const;
      if (job.audienceId !== null) await w.locks.writable(job.audienceId);
      const resolved = await resolveMemberInputs(
        members,
        w.tx,
        job.workspaceId,
        valid.map((v) => v.input),
        [],
        { rejectBadInputs: true },
      );
      w.publish(...resolved.events);
      if (job.audienceId !== null && resolved.seqs.length > 0) await w.include(job.audienceId, resolved.seqs);
      await w.followMembers(resolved.changedIds);

      const errors = [
        ...rejected,
        ...resolved.rejected.map((r) => ({ line: (valid[r.index] as { line: number }).line, message: r.message })),
      ].sort((a, b) => a.line - b.line);
      const count = (status: string) => resolved.outcomes.filter((o) => o.status === status).length;
      const kept = errors.slice(0, Math.max(0, MAX_KEPT_ERRORS - before.errorCount));
      const after: JobState = {
        rowsRead: before.rowsRead + rows.length,
        created: before.created + count("created"),
        merged: before.merged + count("merged"),
        unchanged: before.unchanged + count("unchanged"),
        rejected: before.rejected + errors.length,
        errorCount: before.errorCount + kept.length,
      };
      await imports.advance(w.tx, job, lease, after, kept);
      return after;
    });
    if (result !== "cancelled") {
      // Counted once the chunk has committed (its transaction may have been tried more than once).
      for (const outcome of ["created", "merged", "unchanged", "rejected"] as const) {
        importRows.inc({ outcome }, result[outcome] - before[outcome]);
      }
    }
    return result;
  };
}

export type ChunkApplier = ReturnType<typeof createChunkApplier>;

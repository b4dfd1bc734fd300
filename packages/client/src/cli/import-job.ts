import { setTimeout as sleep } from "node:timers/promises";
import { ApiError } from "../index.js";
import { ExitCode } from "./cli-errors.js";
import { formatDuration } from "./progress.js";
import type { Service } from "./service.js";
import type { ImportJob } from "./upload.js";

const MAX_LISTED_ERRORS = 100;

export const isRunning = (job: ImportJob) => job.status === "queued" || job.status === "running";

/** Asks for the job every interval until it ends; the signal (Ctrl-C) stops the waiting with an AbortError. */
export async function watchImport(
  { api, config }: Service,
  job: ImportJob,
  options: { intervalMs: number; signal: AbortSignal; onUpdate: (job: ImportJob) => void },
): Promise<ImportJob> {
  let current = job;
  while (isRunning(current)) {
    await sleep(options.intervalMs, undefined, { signal: options.signal });
    current = await api.GET("/v0/workspaces/{workspaceId}/imports/{importId}", {
      params: { path: { workspaceId: config.workspaceId, importId: job.id } },
      signal: options.signal,
    });
    options.onUpdate(current);
  }
  return current;
}

/**
 * Cancels the job; the server stops it after the chunk it is applying. A job that ended before
 * the cancel reached it (409 import_finished) is returned as it ended.
 */
export async function cancelImport(
  { api, config }: Service,
  id: string,
): Promise<{ job: ImportJob; cancelled: boolean }> {
  const path = { workspaceId: config.workspaceId, importId: id };
  try {
    return {
      job: await api.DELETE("/v0/workspaces/{workspaceId}/imports/{importId}", { params: { path } }),
      cancelled: true,
    };
  } catch (error) {
    if (!(error instanceof ApiError && error.code === "import_finished")) throw error;
    return {
      job: await api.GET("/v0/workspaces/{workspaceId}/imports/{importId}", { params: { path } }),
      cancelled: false,
    };
  }
}

/** How the command ends for a job that ended by itself (see ExitCode). */
export function exitCodeOf(job: ImportJob): ExitCode {
  if (job.status !== "succeeded") return ExitCode.jobNotSucceeded;
  return job.rejected > 0 ? ExitCode.rowsRejected : ExitCode.ok;
}

/** The closing report: what happened to the job, its counts, and the rejected lines as the API lists them. */
export function summarize(job: ImportJob, elapsedMs: number): string {
  const outcome = {
    queued: "is still queued",
    running: "is still running",
    succeeded: "succeeded",
    failed: `failed: ${job.failureReason ?? "no reason given"}`,
    cancelled: "was cancelled; the counts say what was applied",
  }[job.status];
  const counts: Array<[string, number]> =
    job.kind === "activities"
      ? [
          ["rows read", job.rowsRead],
          ["accepted", job.accepted],
          ["duplicates", job.duplicates],
          ["expired", job.expired],
          ["members created", job.created],
          ["rejected", job.rejected],
        ]
      : [
          ["rows read", job.rowsRead],
          ["created", job.created],
          ["merged", job.merged],
          ["unchanged", job.unchanged],
          ["rejected", job.rejected],
        ];
  const label = Math.max(...counts.map(([name]) => name.length)) + 2;
  const width = Math.max(...counts.map(([, n]) => n.toLocaleString("en-US").length));
  const lines = [
    `Import ${job.id} ${outcome} (${formatDuration(elapsedMs / 1000)}).`,
    ...counts.map(([name, n]) => `  ${`${name}:`.padEnd(label)} ${n.toLocaleString("en-US").padStart(width)}`),
  ];
  if (job.errors.length > 0) {
    lines.push("Rejected rows:");
    for (const error of job.errors) lines.push(`  line ${error.line}: ${error.message}`);
    const unlisted = job.rejected - job.errors.length;
    if (unlisted > 0) {
      lines.push(`  … and ${unlisted.toLocaleString("en-US")} more (the server lists the first ${MAX_LISTED_ERRORS}).`);
    }
  }
  return `${lines.join("\n")}\n`;
}

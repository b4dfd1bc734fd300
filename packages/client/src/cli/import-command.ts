import { type AudienceOption, findOrCreateAudience } from "./audience-lookup.js";
import { ExitCode, isAbort } from "./cli-errors.js";
import { writeLines } from "./fit-line.js";
import { cancelImport, exitCodeOf, summarize, watchImport } from "./import-job.js";
import { createProgress, formatBytes, type Progress, plural, type Terminal } from "./progress.js";
import type { Service } from "./service.js";
import { fileSize, type Upload, uploadCsv } from "./upload.js";

export interface ImportArgs {
  file: string;
  audience: AudienceOption;
  /** What the file's rows are: members, or activities (--activities). */
  kind: "members" | "activities";
  /** How often to ask for the job's progress (and, off a terminal, to print a line). */
  intervalMs: number;
}

/**
 * `import`: upload the file, follow the job, report. Ctrl-C cancels the job (the server keeps the
 * chunks already committed, and the summary says what they were); a second Ctrl-C leaves at once.
 */
export async function runImport(service: Service, args: ImportArgs, { stdout, stderr }: Terminal): Promise<ExitCode> {
  const say = (line: string) => writeLines(stderr, line);
  const size = await fileSize(args.file);
  const audienceId = await findOrCreateAudience(service, args.audience, say);

  const interrupt = new AbortController();
  let shown: Progress | undefined;
  const onSigint = () => {
    if (interrupt.signal.aborted) process.exit(ExitCode.interrupted);
    shown?.stop(); // a bar redrawn after the message would overwrite it
    say("Interrupted: cancelling the import (Ctrl-C again to leave without waiting)…");
    interrupt.abort();
  };
  process.on("SIGINT", onSigint);
  const started = Date.now();
  const progress = (label: string, unit: "rows" | "bytes", total: number) => {
    shown = createProgress({
      label,
      unit,
      total,
      estimated: unit === "rows",
      stream: stderr,
      interactive: stderr.isTTY === true,
      intervalMs: args.intervalMs,
    });
    return shown;
  };
  try {
    const uploading = progress("uploading", "bytes", size);
    let upload: Upload;
    try {
      upload = await uploadCsv(service, args.file, {
        audienceId,
        kind: args.kind,
        signal: interrupt.signal,
        onProgress: ({ bytes }) => uploading.update(bytes),
      });
    } catch (error) {
      if (!isAbort(error)) throw error;
      say("The upload was interrupted before the file was stored: nothing was imported.");
      return ExitCode.interrupted;
    }
    uploading.done(size);
    say(
      `Uploaded ${args.file} (${formatBytes(size)}, about ${upload.rows.toLocaleString("en-US")} ${plural(upload.rows, "row")}): import ${upload.job.id} is ${upload.job.status}.`,
    );

    const importing = progress("importing", "rows", upload.rows);
    try {
      const job = await watchImport(service, upload.job, {
        intervalMs: args.intervalMs,
        signal: interrupt.signal,
        onUpdate: (current) => importing.update(current.rowsRead),
      });
      importing.done(job.rowsRead);
      writeLines(stdout, summarize(job, Date.now() - started));
      return exitCodeOf(job);
    } catch (error) {
      if (!isAbort(error)) throw error;
      const { job, cancelled } = await cancelImport(service, upload.job.id);
      if (!cancelled) say(`Import ${job.id} had already ended when the cancel reached it.`);
      writeLines(stdout, summarize(job, Date.now() - started));
      return cancelled ? ExitCode.interrupted : exitCodeOf(job);
    }
  } finally {
    process.off("SIGINT", onSigint);
  }
}

import { open, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { Readable, Transform, type Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { type AudienceOption, requireAudience } from "./audience-lookup.js";
import { ExitCode, isAbort, usageError } from "./cli-errors.js";
import { writeLines } from "./fit-line.js";
import { createRecordCounter } from "./line-count.js";
import { createProgress, formatBytes, type Progress, plural, type Terminal } from "./progress.js";
import type { Service } from "./service.js";

export const EXPORT_FORMATS = { csv: "text/csv", ndjson: "application/x-ndjson" } as const;
export type ExportFormat = keyof typeof EXPORT_FORMATS;

export interface ExportArgs {
  audience: AudienceOption;
  format: ExportFormat;
  /** A file to write instead of stdout. */
  output: string | undefined;
  /** The audience's members at this earlier instant (ISO 8601) instead of now. */
  asOf?: string | undefined;
  /** Off a terminal, at most one progress line per interval. */
  intervalMs: number;
}

/**
 * `export`: the file representation of listAudienceMembers (or, without an audience, listMembers)
 * piped to stdout or a file as it arrives, never held whole. Progress goes to stderr, and only
 * when the data does not go to the terminal, so stdout carries nothing but the file.
 */
export async function runExport(service: Service, args: ExportArgs, { stdout, stderr }: Terminal): Promise<ExitCode> {
  const audienceId = await requireAudience(service, args.audience);
  const showProgress = args.output !== undefined || stdout.isTTY !== true;
  const asOf = args.asOf === undefined ? {} : { asOf: args.asOf };
  const total = showProgress ? await countMembers(service, audienceId, asOf) : undefined;

  const interrupt = new AbortController();
  const onSigint = () => interrupt.abort();
  process.on("SIGINT", onSigint);
  const workspaceId = service.config.workspaceId;
  // Values exactly as stored (csvEscape=none): the file is for importing again, and formula cells
  // escaped for spreadsheets would come back with a ' they did not have.
  const request = {
    headers: { accept: EXPORT_FORMATS[args.format] },
    query: args.format === "csv" ? { csvEscape: "none", ...asOf } : asOf,
    signal: interrupt.signal,
  };
  let output: Output | undefined;
  let progress: Progress | undefined;
  try {
    const response = audienceId
      ? await service.stream(
          "/v0/workspaces/{workspaceId}/audiences/{audienceId}/members",
          { workspaceId, audienceId },
          request,
        )
      : await service.stream("/v0/workspaces/{workspaceId}/members", { workspaceId }, request);
    if (!response.body) throw new Error("the server answered without a body");
    output = args.output === undefined ? toStdout(stdout) : await toFile(args.output);

    progress = showProgress
      ? createProgress({
          label: "exporting",
          unit: "rows",
          total,
          stream: stderr,
          interactive: stderr.isTTY === true,
          intervalMs: args.intervalMs,
        })
      : undefined;
    const records = createRecordCounter(args.format);
    const headerRecords = args.format === "csv" ? 1 : 0;
    let bytes = 0;
    const rows = () => Math.max(records.records - headerRecords, 0);
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        records.add(chunk);
        bytes += chunk.length;
        progress?.update(rows());
        callback(null, chunk);
      },
    });
    await pipeline(Readable.fromWeb(response.body as WebReadableStream), counter, output.stream, {
      signal: interrupt.signal,
    });
    await output.finish();
    progress?.done(rows());
    if (showProgress)
      writeLines(
        stderr,
        `Exported ${rows().toLocaleString("en-US")} ${plural(rows(), "member")} (${formatBytes(bytes)})${args.output ? ` to ${args.output}` : ""}.`,
      );
    return ExitCode.ok;
  } catch (error) {
    progress?.stop();
    await output?.discard();
    if (isAbort(error) || interrupt.signal.aborted) {
      writeLines(
        stderr,
        `Interrupted: the export is incomplete${args.output ? `, and ${args.output} was not written` : ""}.`,
      );
      return ExitCode.interrupted;
    }
    // A reader that stops early (`| head`) closes the pipe: what it wanted, it has.
    if ((error as NodeJS.ErrnoException).code === "EPIPE") return ExitCode.ok;
    if (output && args.output) writeLines(stderr, `The export is incomplete: ${args.output} was not written.`);
    throw error;
  } finally {
    process.off("SIGINT", onSigint);
  }
}

async function countMembers(
  { api, config }: Service,
  audienceId: string | undefined,
  asOf: { asOf?: string },
): Promise<number> {
  const query = { limit: 1, ...asOf };
  const page = audienceId
    ? await api.GET("/v0/workspaces/{workspaceId}/audiences/{audienceId}/members", {
        params: { path: { workspaceId: config.workspaceId, audienceId }, query },
      })
    : await api.GET("/v0/workspaces/{workspaceId}/members", {
        params: { path: { workspaceId: config.workspaceId }, query },
      });
  return page.totalCount;
}

interface Output {
  stream: Writable;
  finish(): Promise<void>;
  discard(): Promise<void>;
}

function toStdout(stdout: NodeJS.WriteStream): Output {
  // The pipeline ends stdout with the file: nothing else is written to it.
  return { stream: stdout, finish: async () => {}, discard: async () => {} };
}

/**
 * The file is written under a temporary name beside it and renamed when complete, so an
 * interrupted export never leaves a truncated file that looks whole (nor clobbers an older one).
 */
async function toFile(path: string): Promise<Output> {
  const partial = join(dirname(path), `.${basename(path)}.${process.pid}.partial`);
  const handle = await open(partial, "wx").catch((error: NodeJS.ErrnoException) => {
    throw usageError(`cannot write ${path}: ${error.code === "ENOENT" ? "no such directory" : error.message}`);
  });
  const stream = handle.createWriteStream();
  return {
    stream,
    finish: () => rename(partial, path),
    discard: async () => {
      stream.destroy();
      await unlink(partial).catch(() => {});
    },
  };
}

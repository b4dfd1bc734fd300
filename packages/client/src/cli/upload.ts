import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { basename } from "node:path";
import type { components } from "../index.js";
import { usageError } from "./cli-errors.js";
import { createRecordCounter } from "./line-count.js";
import type { Service } from "./service.js";

export type ImportJob = components["schemas"]["Import"];

export interface UploadProgress {
  bytes: number;
  /** Data rows sent so far (the header row is not one). */
  rows: number;
}

export interface Upload {
  job: ImportJob;
  /** The file's rows as counted while sending it: the import's expected total. */
  rows: number;
}

/** The size of a readable, regular file; anything else is the user's mistake (exit 2). */
export async function fileSize(path: string): Promise<number> {
  const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
    throw usageError(`cannot read ${path}: ${error.code === "ENOENT" ? "no such file" : error.message}`);
  });
  if (!info.isFile()) throw usageError(`${path} is not a file`);
  return info.size;
}

/**
 * Sends the CSV file as the body of createImport, streamed from disk (one chunk in memory at a
 * time, whatever the file's size), counting bytes and rows as they go; resolves to the queued job.
 * A fetch body that is a stream needs `duplex: "half"`.
 */
export async function uploadCsv(
  service: Service,
  path: string,
  options: {
    audienceId: string | undefined;
    kind: "members" | "activities";
    signal: AbortSignal;
    onProgress: (progress: UploadProgress) => void;
  },
): Promise<Upload> {
  const records = createRecordCounter("csv");
  let bytes = 0;
  // The header is a record, not a row.
  const rowsSoFar = () => Math.max(records.records - 1, 0);
  async function* chunks(): AsyncGenerator<Uint8Array> {
    for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      records.add(chunk);
      options.onProgress({ bytes, rows: rowsSoFar() });
      yield chunk;
    }
  }

  const response = await service.stream(
    "/v0/workspaces/{workspaceId}/imports",
    { workspaceId: service.config.workspaceId },
    {
      method: "POST",
      // The file's name goes with it (the body is its bytes alone), so that the job is known by
      // it in the console and in listImports; at most the contract's 255 characters.
      query: {
        audienceId: options.audienceId,
        kind: options.kind,
        name: Array.from(basename(path)).slice(0, 255).join(""),
      },
      headers: { "content-type": "text/csv" },
      body: pullStream(chunks()),
      duplex: "half",
      // Unless redirects are refused, fetch clones the request so that it could send it again to
      // another URL, and the clone tees the body: the branch no one reads would hold the whole
      // file in memory (fetch standard, HTTP-network-or-cache fetch, step 8.1).
      redirect: "error",
      signal: options.signal,
    } as RequestInit,
  );
  return { job: (await response.json()) as ImportJob, rows: rowsSoFar() };
}

/** A web stream that reads the next chunk only when fetch asks for it: at most one chunk waits in memory. */
function pullStream(source: AsyncGenerator<Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await source.next();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    async cancel() {
      await source.return(undefined);
    },
  });
}

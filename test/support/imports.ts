import type { components } from "@audience-service/client";
import { expect } from "vitest";
import type { TestWorkspace } from "./factories.ts";
import { call, urlOf } from "./live-server.ts";

export type Import = components["schemas"]["Import"];

const ENDED = ["succeeded", "failed", "cancelled"];

/** Uploads a CSV file with the typed SDK (the body sent as it is, as text/csv). */
export function uploadCsv(
  ws: TestWorkspace,
  csv: string,
  audienceId?: string,
  kind?: components["schemas"]["ImportKind"],
): Promise<Import> {
  const query = { ...(audienceId === undefined ? {} : { audienceId }), ...(kind === undefined ? {} : { kind }) };
  return ws.api.POST("/v0/workspaces/{workspaceId}/imports", {
    params: { path: { workspaceId: ws.id }, query },
    body: csv,
    bodySerializer: (body: unknown) => body as string,
    headers: { "content-type": "text/csv" },
  });
}

/** Uploads raw bytes with any headers, for the uploads the SDK would not send; checked against the contract. */
export function uploadRaw(
  server: { baseUrl: string },
  ws: TestWorkspace,
  body: string | Uint8Array<ArrayBuffer>,
  headers: Record<string, string> = { "content-type": "text/csv" },
  query = "",
) {
  const url = urlOf("/v0/workspaces/{workspaceId}/imports", { workspaceId: ws.id }, query);
  return call(server, "POST", url, {
    token: ws.key,
    headers,
    rawBody: typeof body === "string" ? body : new Blob([body]),
  });
}

export function getImport(ws: TestWorkspace, importId: string): Promise<Import> {
  return ws.api.GET("/v0/workspaces/{workspaceId}/imports/{importId}", {
    params: { path: { workspaceId: ws.id, importId } },
  });
}

/** Polls the job until it has ended (or the deadline passes, failing the test), and returns it. */
export async function importEnded(ws: TestWorkspace, importId: string, timeout = 60_000): Promise<Import> {
  let job: Import | undefined;
  await expect
    .poll(
      async () => {
        job = await getImport(ws, importId);
        return ENDED.includes(job.status);
      },
      { timeout, interval: 50 },
    )
    .toBe(true);
  return job as Import;
}

/** Uploads a file and waits for its job to end. */
export async function importCsv(ws: TestWorkspace, csv: string, audienceId?: string): Promise<Import> {
  const queued = await uploadCsv(ws, csv, audienceId);
  return importEnded(ws, queued.id);
}

/** Uploads a file of activities (kind=activities) and waits for its job to end. */
export async function importActivityCsv(ws: TestWorkspace, csv: string): Promise<Import> {
  const queued = await uploadCsv(ws, csv, undefined, "activities");
  return importEnded(ws, queued.id);
}

/** A CSV file: the header row and the rows, with a line ending (LF unless told). */
export const csvOf = (rows: string[][], eol = "\n") => rows.map((row) => row.join(",")).join(eol) + eol;

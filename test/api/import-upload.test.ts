import http from "node:http";
import { describe, expect } from "vitest";
import { snapshotDb } from "../security/db-state.ts";
import { checkResponse } from "../support/contract.ts";
import { createAudience, type TestWorkspace } from "../support/factories.ts";
import { test } from "../support/fixture.ts";
import { csvOf, uploadRaw } from "../support/imports.ts";
import { type LiveServer, startLiveServer, urlOf } from "../support/live-server.ts";

const MAX_BYTES = 65_536;

/** Uploads the server refuses, each with nothing left stored; the largest file accepted here is 64 KiB. */
// biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
const it = test.extend("server", { scope: "file" }, async ({}, { onCleanup }) => {
  const server = await startLiveServer({ settings: { imports: { maxBytes: MAX_BYTES } } });
  onCleanup(() => server.close());
  return server;
});

/** Sends the upload and checks that it is refused as expected and left the workspace's rows as they were. */
async function refused(
  server: LiveServer,
  ws: TestWorkspace,
  body: string | Uint8Array<ArrayBuffer>,
  expected: { status: number; code: string; detail?: RegExp },
  headers?: Record<string, string>,
  query?: string,
) {
  const before = await snapshotDb(server.store, { workspaceId: ws.id });
  const response = await uploadRaw(server, ws, body, headers, query);
  expect(response.status).toBe(expected.status);
  expect(response.problem?.code).toBe(expected.code);
  if (expected.detail) expect(response.problem?.detail).toMatch(expected.detail);
  expect(await snapshotDb(server.store, { workspaceId: ws.id })).toEqual(before);
}

describe("createImport refuses a file it cannot import, and stores nothing of it", () => {
  it("400 invalid_csv for bytes that are not UTF-8", async ({ server, ws }) => {
    const bytes = new Uint8Array([...Buffer.from("email,company\nada@example.com,Caf"), 0xe9, 0x0a]);
    await refused(server, ws, bytes, { status: 400, code: "invalid_csv", detail: /not UTF-8/ });
  });

  it.for([
    ["an empty file", "", /no header row/],
    ["only blank lines", "\r\n\n,,\n", /no header row/],
    ["a header without id or email", "name,company\nAda,Acme\n", /must name an id or an email column/],
    ["a column name that is not a field key", "email,first name\n", /Column 2 of the header, "first name"/],
    ["a repeated column", "email,plan,plan\n", /names the column "plan" twice/],
    ["a header that is not valid CSV", 'email,"plan\nx\n', /not valid CSV/],
    // One byte order mark is dropped, by the check as by the job; a second is part of the name.
    ["two byte order marks", "\uFEFF\uFEFFemail\nada@example.com\n", /"\\ufeffemail".*more than one byte order mark/],
  ] as const)("400 invalid_csv for %s", async ([, csv, detail], { server, ws }) => {
    await refused(server, ws, csv, { status: 400, code: "invalid_csv", detail });
  });

  it.for([
    ["another charset", "text/csv; charset=iso-8859-1"],
    ["JSON", "application/json"],
    ["plain text", "text/plain"],
    ["no media type at all", undefined],
  ] as const)("415 for %s", async ([, contentType], { server, ws }) => {
    const headers: Record<string, string> = contentType === undefined ? {} : { "content-type": contentType };
    const body = contentType === "application/json" ? '{"email":"ada@example.com"}' : "email\nada@example.com\n";
    await refused(server, ws, body, { status: 415, code: "unsupported_media_type" }, headers);
  });

  it("accepts charset=utf-8 in any spelling", async ({ ws }) => {
    const csv = "email\nada@example.com\n";
    for (const contentType of ["text/csv; charset=UTF-8", 'text/csv;charset="utf8"', "TEXT/CSV"]) {
      const job = await ws.api.POST("/v0/workspaces/{workspaceId}/imports", {
        params: { path: { workspaceId: ws.id } },
        body: csv,
        bodySerializer: (body: unknown) => body as string,
        headers: { "content-type": contentType },
      });
      expect(job.status, contentType).toBe("queued");
    }
  });

  it("413 for a file larger than IMPORT_MAX_BYTES, declared or streamed", async ({ server, ws }) => {
    const csv = csvOf([["email"], ...Array.from({ length: 4_000 }, (_, i) => [`member${i}@example.com`])]);
    expect(Buffer.byteLength(csv)).toBeGreaterThan(MAX_BYTES);
    await refused(server, ws, csv, { status: 413, code: "payload_too_large", detail: /IMPORT_MAX_BYTES/ });

    const before = await snapshotDb(server.store, { workspaceId: ws.id });
    const url = urlOf("/v0/workspaces/{workspaceId}/imports", { workspaceId: ws.id });
    const bytes = Buffer.from(csv);
    // No Content-Length: the limit is found while the file arrives.
    const streamed = new ReadableStream({
      start(controller) {
        for (let at = 0; at < bytes.length; at += 8_192) controller.enqueue(bytes.subarray(at, at + 8_192));
        controller.close();
      },
    });
    const response = await fetch(server.baseUrl + url, {
      method: "POST",
      headers: { authorization: `Bearer ${ws.key}`, "content-type": "text/csv" },
      body: streamed,
      duplex: "half",
    } as RequestInit);
    const text = await response.text();
    checkResponse({
      method: "POST",
      url,
      status: response.status,
      headers: Object.fromEntries(response.headers),
      body: text,
    });
    expect(response.status).toBe(413);
    expect(await snapshotDb(server.store, { workspaceId: ws.id })).toEqual(before);
  });

  it("404 for an unknown audience, 409 for an archived one", async ({ server, ws }) => {
    const csv = "email\nada@example.com\n";
    await refused(server, ws, csv, { status: 404, code: "audience_not_found" }, undefined, "audienceId=aud_nobody");
    const audienceId = await createAudience(ws);
    await ws.api.DELETE("/v0/workspaces/{workspaceId}/audiences/{audienceId}", {
      params: { path: { workspaceId: ws.id, audienceId } },
    });
    await refused(server, ws, csv, { status: 409, code: "audience_archived" }, undefined, `audienceId=${audienceId}`);
  });

  it("401 before anything else, whatever the body", async ({ server, ws }) => {
    const url = urlOf("/v0/workspaces/{workspaceId}/imports", { workspaceId: ws.id });
    const response = await fetch(server.baseUrl + url, {
      method: "POST",
      headers: { "content-type": "text/csv; charset=latin1" },
      body: "email\n",
    });
    expect(response.status).toBe(401);
  });

  it("leaves nothing when the client goes away during the upload", async ({ server, ws }) => {
    const jobs = () =>
      server.store.db.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM import_jobs WHERE workspace_id = ${ws.id}`.then((rows) => rows[0]?.n);
    const url = new URL(urlOf("/v0/workspaces/{workspaceId}/imports", { workspaceId: ws.id }), server.baseUrl);
    const request = http.request(url, {
      method: "POST",
      headers: { authorization: `Bearer ${ws.key}`, "content-type": "text/csv", "content-length": "60000" },
    });
    request.on("error", () => {}); // destroyed below, on purpose
    request.write(`email\n${"x@example.com\n".repeat(2_000)}`);
    // The upload has begun (its job exists, not yet shown to clients): now the client goes away.
    await expect.poll(jobs, { timeout: 10_000, interval: 20 }).toBe(1);
    request.destroy();
    await expect.poll(jobs, { timeout: 10_000, interval: 50 }).toBe(0);
  });
});

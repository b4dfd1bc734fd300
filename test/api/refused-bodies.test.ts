import http from "node:http";
import { afterEach, beforeEach, describe, expect } from "vitest";
import { checkResponse } from "../support/contract.ts";
import type { TestWorkspace } from "../support/factories.ts";
import { test } from "../support/fixture.ts";
import { startLiveServer, urlOf } from "../support/live-server.ts";

const MAX_BYTES = 262_144;

// A short request timeout: a request stuck behind an unread body would get 408 within the test,
// and fail the status assertion, instead of hanging for a minute.
// biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
const it = test.extend("server", { scope: "file" }, async ({}, { onCleanup }) => {
  const server = await startLiveServer({
    settings: { imports: { maxBytes: MAX_BYTES }, http: { requestTimeoutMs: 10_000 } },
  });
  onCleanup(() => server.close());
  return server;
});

interface Answer {
  status: number;
  connection: string | undefined;
  /** Whether the request went out on a connection an earlier request had used. */
  reusedSocket: boolean;
}

/** One request through the agent: the body in one piece (Content-Length) or in chunks (chunked). */
function send(
  agent: http.Agent,
  server: { baseUrl: string },
  ws: TestWorkspace,
  method: string,
  url: string,
  body?: { contentType: string; bytes: Buffer; chunked?: boolean },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${ws.key}` };
    if (body) headers["content-type"] = body.contentType;
    if (body && !body.chunked) headers["content-length"] = String(body.bytes.length);
    const request = http.request(new URL(url, server.baseUrl), { method, agent, headers });
    // The server may answer and close before the whole body is written: that is its right.
    request.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE" && error.code !== "ECONNRESET") reject(error);
    });
    request.on("response", (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        text += chunk;
      });
      response.on("end", () => {
        checkResponse({ method, url, status: response.statusCode ?? 0, headers: response.headers, body: text });
        resolve({
          status: response.statusCode ?? 0,
          connection: response.headers.connection,
          reusedSocket: request.reusedSocket,
        });
      });
    });
    if (!body) request.end();
    else if (!body.chunked) request.end(body.bytes);
    else {
      for (let at = 0; at < body.bytes.length; at += 16_384) request.write(body.bytes.subarray(at, at + 16_384));
      request.end();
    }
  });
}

const csv = (header: string, rows: number) =>
  Buffer.from(`${header}\n${Array.from({ length: rows }, (_, i) => `member${i}@example.com,Acme`).join("\n")}\n`);
const notUtf8 = Buffer.concat([Buffer.from("email,company\nada@example.com,Caf"), Buffer.from([0xe9, 0x0a])]);

/**
 * A refused request whose body the server did not read to its end: the next request on a
 * kept-alive connection must be answered at once. Either the rest of the body was drained (the
 * answer keeps the connection, and the next request reuses it) or the answer said
 * `Connection: close` (the next request goes out on a new connection).
 */
describe("a refused body does not leave a dead kept-alive connection", () => {
  let agent: http.Agent;
  beforeEach(() => {
    agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  });
  afterEach(() => agent.destroy());

  const imports = (ws: TestWorkspace) => urlOf("/v0/workspaces/{workspaceId}/imports", { workspaceId: ws.id });

  async function thenAnswered(ws: TestWorkspace, server: { baseUrl: string }, first: Answer) {
    const next = await send(agent, server, ws, "GET", imports(ws));
    expect(next.status).toBe(200);
    expect(next.reusedSocket).toBe(first.connection !== "close");
  }

  it.for([
    ["a bad header, declared length", csv("name,company", 7_000), false, "keep-alive"],
    ["a bad header, chunked", csv("name,company", 7_000), true, "close"],
    [
      "a first chunk that is not UTF-8, declared length",
      Buffer.concat([notUtf8, csv("x", 7_000)]),
      false,
      "keep-alive",
    ],
  ] as const)("400 invalid_csv for %s", async ([, bytes, chunked, connection], { server, ws }) => {
    expect(bytes.length).toBeLessThan(MAX_BYTES);
    const first = await send(agent, server, ws, "POST", imports(ws), { contentType: "text/csv", bytes, chunked });
    expect([first.status, first.connection]).toEqual([400, connection]);
    await thenAnswered(ws, server, first);
  });

  it("413 for a file over IMPORT_MAX_BYTES, found while it streams in", async ({ server, ws }) => {
    // Three times the limit: most of it is still to come when the limit is reached.
    const bytes = csv("email,company", 28_000);
    expect(bytes.length).toBeGreaterThan(MAX_BYTES * 3);
    const first = await send(agent, server, ws, "POST", imports(ws), {
      contentType: "text/csv",
      bytes,
      chunked: true,
    });
    expect([first.status, first.connection]).toEqual([413, "close"]);
    await thenAnswered(ws, server, first);
  });

  it.for([
    ["drained", 12_000, "keep-alive"],
    ["too large to drain", 80_000, "close"],
  ] as const)(
    "413 for a declared file over IMPORT_MAX_BYTES, refused before it is read: %s",
    async ([, rows, connection], { server, ws }) => {
      const bytes = csv("email,company", rows);
      const first = await send(agent, server, ws, "POST", imports(ws), { contentType: "text/csv", bytes });
      expect([first.status, first.connection]).toEqual([413, connection]);
      await thenAnswered(ws, server, first);
    },
  );

  it("415 for a file in another charset, refused before it is read", async ({ server, ws }) => {
    const bytes = csv("email,company", 7_000);
    const first = await send(agent, server, ws, "POST", imports(ws), {
      contentType: "text/csv; charset=latin1",
      bytes,
    });
    expect(first.status).toBe(415);
    await thenAnswered(ws, server, first);
  });

  it.for([
    ["declared", false],
    ["chunked", true],
  ] as const)("413 for a JSON body over the limit, %s", async ([, chunked], { server, ws }) => {
    const url = urlOf("/v0/workspaces/{workspaceId}/audiences", { workspaceId: ws.id });
    const bytes = Buffer.from(JSON.stringify({ name: "x".repeat(1_100_000) }));
    const first = await send(agent, server, ws, "POST", url, { contentType: "application/json", bytes, chunked });
    expect([first.status, first.connection]).toEqual([413, "close"]);
    await thenAnswered(ws, server, first);
  });
});

import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkResponse } from "../support/contract.ts";
import { createAudience, createWorkspace, type TestWorkspace } from "../support/factories.ts";
import { type LiveServer, startLiveServer } from "../support/live-server.ts";

/**
 * Requests that are wrong below the level of the contract: bytes that are not UTF-8 in a JSON
 * body, a URL or request that is not valid HTTP, headers too large, a request trickled past the
 * request timeout. Each gets a problem document with a request id, like every other answer.
 */
const REQUEST_TIMEOUT_MS = 1_000;

let server: LiveServer;
let ws: TestWorkspace;
let audienceId: string;
beforeAll(async () => {
  server = await startLiveServer({ settings: { http: { requestTimeoutMs: REQUEST_TIMEOUT_MS } } });
  ws = await createWorkspace(server);
  audienceId = await createAudience(ws);
});
afterAll(() => server.close());

/** Sends raw bytes as a request body, and checks the answer against the contract. */
async function postBytes(path: string, body: Buffer) {
  const response = await fetch(server.baseUrl + path, {
    method: "POST",
    headers: { authorization: `Bearer ${ws.key}`, "content-type": "application/json" },
    body: new Uint8Array(body),
  });
  const text = await response.text();
  checkResponse({
    method: "POST",
    url: path,
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: text,
  });
  return { status: response.status, body: JSON.parse(text) };
}

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** Writes raw bytes on a socket (the second part after a pause, if any) and reads the answer until the server closes. */
function rawRequest(first: string, then?: { afterMs: number; bytes: string }): Promise<RawAnswer> {
  const { port } = new URL(server.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1", () => {
      socket.write(first);
      if (then) setTimeout(() => socket.writable && socket.write(then.bytes), then.afterMs);
    });
    let data = "";
    socket.on("data", (chunk) => {
      data += chunk;
    });
    socket.on("error", reject);
    socket.on("close", () => {
      const [head = "", body = ""] = data.split("\r\n\r\n");
      const [statusLine = "", ...lines] = head.split("\r\n");
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]),
      );
      resolve({ status: Number(statusLine.split(" ")[1]), headers, body: body ? JSON.parse(body) : {} });
    });
  });
}

const expectProblemWithRequestId = (answer: RawAnswer, status: number, code: string) => {
  expect(answer.status).toBe(status);
  expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/);
  expect(answer.body).toMatchObject({ status, code, type: `urn:problem-type:audience-service:${code}` });
  expect(answer.headers["x-request-id"]).toMatch(/^req_[0-9A-Za-z]{16}$/);
  expect(answer.body.requestId).toBe(answer.headers["x-request-id"]);
};

describe("a JSON body that is not UTF-8", () => {
  it("is 400 malformed_json, so two different byte strings never become one member", async () => {
    const path = `/v0/workspaces/${ws.id}/audiences/${audienceId}/members`;
    for (const bytes of [
      [0x78, 0xc0, 0xaf],
      [0x78, 0xc1, 0xbf],
      [0x78, 0xff],
    ]) {
      const body = Buffer.concat([Buffer.from('{"memberIds":["'), Buffer.from(bytes), Buffer.from('"]}')]);
      const answer = await postBytes(path, body);
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ code: "malformed_json", detail: "The body is not valid UTF-8." });
    }
    const valid = await postBytes(path, Buffer.from('{"memberIds":["x€","x😀"]}', "utf8"));
    expect(valid.status).toBe(200);
    expect(valid.body).toMatchObject({ added: 2, created: 2 });
  });
});

describe("answers before any operation", () => {
  it("carry X-Request-Id and requestId for a malformed %-escape in the URL", async () => {
    const path = `/v0/workspaces/${ws.id}/audiences/%E0%A4%A`;
    const response = await fetch(server.baseUrl + path, { headers: { authorization: `Bearer ${ws.key}` } });
    const body = await response.json();
    expect(response.status).toBe(400);
    expect(body.code).toBe("invalid_request");
    expect(response.headers.get("x-request-id")).toMatch(/^req_/);
    expect(body.requestId).toBe(response.headers.get("x-request-id"));
  });

  it("carry them for headers over 16 KiB (431)", async () => {
    const answer = await rawRequest(`GET /healthz HTTP/1.1\r\nHost: a\r\nX-Big: ${"x".repeat(20_000)}\r\n\r\n`);
    expectProblemWithRequestId(answer, 431, "headers_too_large");
  });

  it("carry them for a request that is not HTTP (400)", async () => {
    const answer = await rawRequest("HELLO THERE\r\n\r\n");
    expectProblemWithRequestId(answer, 400, "invalid_request");
  });

  it("answer a request whose headers trickle past the request timeout with 408", async () => {
    const answer = await rawRequest("GET /healthz HTTP/1.1\r\nHost: a\r\n");
    expectProblemWithRequestId(answer, 408, "request_timeout");
    expect(answer.body.detail).toBe("The request did not arrive within 1 seconds.");
  });

  it("answer a request whose body trickles past the request timeout with 408", async () => {
    const head = `POST /v0/workspaces/${ws.id}/audiences HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${ws.key}\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n`;
    const answer = await rawRequest(`${head}{"name":`, { afterMs: 200, bytes: '"slow' });
    expectProblemWithRequestId(answer, 408, "request_timeout");
  });
});

// The console of a running server: one line per answered request at info (method, route, status,
// duration, request id), never a body, and nothing at warn or above on a clean start. It used to
// be two lines per request (Fastify's "incoming request" and "request completed") and a warning
// about application/x-ndjson at every start.
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/app.ts";
import { ADMIN_TOKEN, openTestStore } from "../support/live-server.ts";

interface Line {
  level: number;
  msg: string;
  reqId?: string;
  [field: string]: unknown;
}

const lines: Line[] = [];
/** What the process warned about while the app was built (Fastify's deprecations, say). */
const processWarnings: string[] = [];
let raw = "";
let baseUrl = "";
let close: () => Promise<void>;
beforeAll(async () => {
  const stream = new Writable({
    write(chunk, _encoding, done) {
      raw += String(chunk);
      for (const line of String(chunk).trim().split("\n")) lines.push(JSON.parse(line) as Line);
      done();
    },
  });
  const opened = await openTestStore();
  const warned = (warning: Error) => processWarnings.push(warning.message);
  process.on("warning", warned);
  const app = await buildApp({
    store: opened.store,
    logger: { level: "info", stream },
    settings: { http: { adminToken: ADMIN_TOKEN } },
  });
  baseUrl = await app.listen({ port: 0, host: "127.0.0.1" });
  // Warnings are emitted on the next tick.
  await new Promise((resolve) => setImmediate(resolve));
  process.off("warning", warned);
  close = async () => {
    await app.close();
    await opened.close();
  };
});
afterAll(() => close());

const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" };
const linesOf = (requestId: string | null) => lines.filter((line) => line.reqId === requestId);

describe("the server's log", () => {
  it("has no warning or error from a clean start", () => {
    expect(lines.filter((line) => line.level >= 40)).toEqual([]);
    expect(processWarnings).toEqual([]);
  });

  it("has one line per request with its method, route, status, duration and request id, and never its body", async () => {
    const secret = "Body-Marker-3f9a";
    const created = await fetch(`${baseUrl}/v0/workspaces`, {
      method: "POST",
      headers: admin,
      body: JSON.stringify({ name: secret }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const requestId = created.headers.get("x-request-id");
    const [line, ...more] = linesOf(requestId);
    expect(more).toEqual([]);
    expect(line).toMatchObject({
      level: 30,
      msg: "request",
      method: "POST",
      route: "/v0/workspaces",
      operation: "createWorkspace",
      status: 201,
    });
    expect(line?.durationMs).toEqual(expect.any(Number));

    // A refused request: one line too, with the route's template rather than the ids of its path.
    const refused = await fetch(`${baseUrl}/v0/workspaces/${id}/audiences`, {
      headers: { authorization: "Bearer nope" },
    });
    expect(refused.status).toBe(401);
    expect(linesOf(refused.headers.get("x-request-id"))).toEqual([
      expect.objectContaining({ method: "GET", route: "/v0/workspaces/:workspaceId/audiences", status: 401 }),
    ]);

    // No route at all: one line, without the path a client chose.
    const unknown = await fetch(`${baseUrl}/no/such/${secret}`);
    expect(unknown.status).toBe(404);
    expect(linesOf(unknown.headers.get("x-request-id"))).toEqual([
      expect.objectContaining({ method: "GET", route: null, status: 404 }),
    ]);
    expect(raw).not.toContain(secret);
    expect(raw).not.toMatch(/incoming request|request completed/);
  });
});

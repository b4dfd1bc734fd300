import { once } from "node:events";
import http from "node:http";
import { setTimeout as delay } from "node:timers/promises";
import { describe, expect, onTestFinished } from "vitest";
import { buildApp } from "../../src/app.ts";
import type { Store } from "../../src/platform/db/database.ts";
import { checkedClient } from "../support/checked-client.ts";
import { createWorkspace, type TestWorkspace, upsertMembers } from "../support/factories.ts";
import { test } from "../support/fixture.ts";
import { ADMIN_TOKEN, call, urlOf } from "../support/live-server.ts";

const MEMBERS = "/v0/workspaces/{workspaceId}/members";
const LIMITS = { concurrency: 2, perKey: 1 };
/** 300 members of 50 fields of 1,000 characters: a file of about 15 MB, more than the sockets' buffers hold. */
const COUNT = 300;
const member = (n: number) => ({
  id: `big${String(n).padStart(4, "0")}`,
  fields: Object.fromEntries(
    Array.from({ length: 50 }, (_, f) => [
      f < 4 ? ["firstName", "lastName", "role", "company"][f] : `field${f}`,
      "x".repeat(1_000),
    ]),
  ),
});

/** Another API key of the workspace. */
async function newKey(server: { baseUrl: string }, workspaceId: string): Promise<string> {
  const admin = checkedClient(server.baseUrl, ADMIN_TOKEN);
  const created = await admin.POST("/v0/workspaces/{workspaceId}/api-keys", {
    params: { path: { workspaceId } },
    body: { name: "exports" },
  });
  return created.key;
}

/**
 * An export whose client takes the headers and then reads nothing: it holds its place until the
 * server drops it or the test ends. `readRest` reads on to the end of the transfer and tells
 * whether the file came whole.
 */
function stalledExport(server: { baseUrl: string }, workspaceId: string, key: string) {
  const req = http.request(`${server.baseUrl}/v0/workspaces/${workspaceId}/members`, {
    agent: false,
    headers: { authorization: `Bearer ${key}`, accept: "application/x-ndjson" },
  });
  req.on("error", () => {});
  const response = new Promise<http.IncomingMessage>((resolve) => req.on("response", resolve));
  const paused = response.then((res) => {
    res.pause();
    res.on("error", () => {});
    return res;
  });
  req.end();
  onTestFinished(() => {
    req.destroy();
  });
  return {
    status: paused.then((res) => res.statusCode),
    async readRest(): Promise<boolean> {
      const res = await paused;
      const closed = new Promise<boolean>((resolve) => res.once("close", () => resolve(res.complete)));
      res.resume();
      return closed;
    },
  };
}

/**
 * A server of its own for one test, on the test's store, that allows 2 exports at once, 1 per
 * key, drops a client that takes nothing for writeTimeoutMs, and gives the place of one that
 * has taken nothing for stalledAfterMs to an export it would otherwise refuse.
 */
async function serve(store: Store, writeTimeoutMs: number, stalledAfterMs = writeTimeoutMs) {
  const app = await buildApp({
    store,
    settings: { http: { adminToken: ADMIN_TOKEN }, exports: { ...LIMITS, writeTimeoutMs, stalledAfterMs } },
    workers: false,
  });
  const baseUrl = await app.listen({ port: 0, host: "127.0.0.1" });
  onTestFinished(async () => {
    // Stalled clients left over would hold close() up.
    app.server.closeAllConnections();
    await app.close();
  });
  return { baseUrl, server: app.server };
}

/** A workspace of COUNT large members. */
const it = test.extend("big", { scope: "file" }, async ({ server }) => {
  const ws = await createWorkspace(server);
  for (let n = 0; n < COUNT; n += 20) {
    await upsertMembers(
      ws,
      Array.from({ length: 20 }, (_, i) => member(n + i)),
    );
  }
  return ws;
});

/** The promise, or a failure naming what did not happen within `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`waited ${ms} ms for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

const fileOf = (ws: TestWorkspace) => urlOf(MEMBERS, { workspaceId: ws.id });

describe("exports are bounded work", () => {
  // The first test pays for the members, on a busy machine sometimes most of a minute.
  it("refuses a key's second export at once with 429 too_many_exports and Retry-After", { timeout: 180_000 }, async ({
    server,
    big: ws,
  }) => {
    const patient = await serve(server.store, 600_000);
    const key = await newKey(patient, ws.id);
    const held = stalledExport(patient, ws.id, key);
    expect(await held.status).toBe(200);
    for (const accept of ["text/csv", "application/x-ndjson"]) {
      const refused = await call(patient, "GET", fileOf(ws), { token: key, headers: { accept } });
      expect([refused.status, refused.problem?.code]).toEqual([429, "too_many_exports"]);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    // Its pages are not exports: served as ever.
    const page = await call(patient, "GET", urlOf(MEMBERS, { workspaceId: ws.id }, "limit=5"), { token: key });
    expect(page.data?.results).toHaveLength(5);
  });

  it("refuses any export beyond the server's places with 503 and Retry-After, and serves pages and writes meanwhile", async ({
    server,
    big: ws,
  }) => {
    const patient = await serve(server.store, 600_000);
    const holders = [stalledExport(patient, ws.id, await newKey(patient, ws.id))];
    holders.push(stalledExport(patient, ws.id, await newKey(patient, ws.id)));
    expect(await Promise.all(holders.map((h) => h.status))).toEqual([200, 200]);
    const refused = await call(patient, "GET", fileOf(ws), {
      token: await newKey(patient, ws.id),
      headers: { accept: "text/csv" },
    });
    expect([refused.status, refused.problem?.code]).toEqual([503, "service_unavailable"]);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);

    const other = await createWorkspace(server);
    const written = await call(patient, "POST", urlOf(MEMBERS, { workspaceId: other.id }), {
      token: other.key,
      body: { members: [{ id: "m1", email: "m1@example.com" }] },
    });
    expect(written.data?.results).toEqual([{ id: "m1", status: "created" }]);
    const page = await call(patient, "GET", urlOf(MEMBERS, { workspaceId: other.id }, "limit=5"), { token: other.key });
    expect(page.data?.results.map((m) => m.id)).toEqual(["m1"]);
  });

  it("drops a client that reads nothing after the write timeout, not twice that, and its key may export again", async ({
    server,
    big: ws,
  }) => {
    // Long enough that a busy machine does not stall a reading client for as long.
    const writeTimeoutMs = 10_000;
    const strict = await serve(server.store, writeTimeoutMs);
    const key = await newKey(strict, ws.id);
    const answered = once(strict.server, "request") as Promise<[http.IncomingMessage, http.ServerResponse]>;
    const stalled = stalledExport(strict, ws.id, key);
    const [, response] = await answered;
    expect(await stalled.status).toBe(200);
    // Node's own idle timer on the socket, re-armed once under a partly taken write, dropped such
    // a client only after about twice the write timeout: the response must close before that.
    await within(once(response, "close"), 2 * writeTimeoutMs - 2_000, "the stalled export's response to close");
    // The client now reads what had been sent, then the end of a transfer that is not whole.
    expect(await stalled.readRest()).toBe(false);
    const again = await call(strict, "GET", fileOf(ws), { token: key, headers: { accept: "application/x-ndjson" } });
    expect(again.status).toBe(200);
    expect(again.text.trimEnd().split("\n")).toHaveLength(COUNT);
  });

  it("gives a stalled reader's place to another key's export instead of refusing it", async ({ server, big: ws }) => {
    // Stalled readers are dropped only for want of a place: the write timeout is far off.
    const sharing = await serve(server.store, 600_000, 200);
    const holders = [stalledExport(sharing, ws.id, await newKey(sharing, ws.id))];
    holders.push(stalledExport(sharing, ws.id, await newKey(sharing, ws.id)));
    expect(await Promise.all(holders.map((h) => h.status))).toEqual([200, 200]);
    const key = await newKey(sharing, ws.id);
    const exported = () => call(sharing, "GET", fileOf(ws), { token: key, headers: { accept: "text/csv" } });
    // Refused (503) while both readers are still taking in what their sockets hold, then served.
    const served = await within(
      (async () => {
        for (let answer = await exported(); ; answer = await exported()) {
          if (answer.status === 200) return answer;
          expect([answer.status, answer.problem?.code]).toEqual([503, "service_unavailable"]);
          await delay(100);
        }
      })(),
      20_000,
      "another key's export to be served",
    );
    expect(served.text.trimEnd().split("\n")).toHaveLength(COUNT + 1);
    // One of the stalled readers was cut for it; the other still holds its place.
    const whole = await Promise.all(holders.map((h) => h.readRest()));
    expect(whole.filter((complete) => !complete).length).toBeGreaterThanOrEqual(1);
  });
});

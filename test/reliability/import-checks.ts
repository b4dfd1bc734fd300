import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import type { Import } from "../support/imports.ts";
import type { ActivityFile } from "./import-activity-file.ts";
import { CHUNK_ROWS, type ImportFile } from "./import-file.ts";
import { createTestDatabase, listAudienceMembers, send, sendCsv } from "./server-process.ts";

/**
 * What the import reliability tests share: the store the server processes run on, uploading and
 * following a job through the API, and checking everything a user sees once it has ended.
 */

const ENDED = ["succeeded", "failed", "cancelled"];

/**
 * The store of the test's processes (a PostgreSQL database when TEST_DATABASE_URL is set, else
 * a data directory), with a short lease: a job whose process was killed is taken over after
 * 1.5 s instead of the default 30 s (config.ts allows 1 s at least), and chunks of CHUNK_ROWS.
 */
export async function importStore(): Promise<{ env: Record<string, string>; drop: () => Promise<void> }> {
  const lease = { IMPORT_LEASE_MS: "1500", IMPORT_CHUNK_ROWS: String(CHUNK_ROWS) };
  if (process.env.TEST_DATABASE_URL) {
    const database = await createTestDatabase(process.env.TEST_DATABASE_URL);
    return { env: { DATABASE_URL: database.url, ...lease }, drop: database.drop };
  }
  const dataDir = await mkdtemp(join(tmpdir(), "audience-import-crash-"));
  return { env: { DATA_DIR: dataDir, ...lease }, drop: () => rm(dataDir, { recursive: true, force: true }) };
}

export interface Workspace {
  apiKey: string;
  /** `/v0/workspaces/{id}` */
  path: string;
}

/** Creates an audience and uploads the file to it; the queued job's id. */
export async function uploadTo(server: { baseUrl: string }, ws: Workspace, csv: string) {
  const audience = await send(server, ws.apiKey, "POST", `${ws.path}/audiences`, { name: "Imported" });
  expect(audience.status).toBe(201);
  const queued = await sendCsv<Import>(server, ws.apiKey, `${ws.path}/imports?audienceId=${audience.body.id}`, csv);
  expect(queued.status, JSON.stringify(queued.body)).toBe(202);
  return { audienceId: audience.body.id as string, importId: queued.body.id };
}

/** Uploads a file of activities (kind=activities); the queued job's id. */
export async function uploadActivities(server: { baseUrl: string }, ws: Workspace, csv: string) {
  const queued = await sendCsv<Import>(server, ws.apiKey, `${ws.path}/imports?kind=activities`, csv);
  expect(queued.status, JSON.stringify(queued.body)).toBe(202);
  return queued.body.id;
}

/**
 * Checks what a user sees once an activity file's job has ended: its counts and errors; the
 * type's exact count (a chunk applied twice would store its rows without an id twice); the
 * members it created, listed and in the feed once each; and each member's timeline.
 */
export async function verifyActivityImport(
  server: { baseUrl: string },
  ws: Workspace,
  importId: string,
  file: ActivityFile,
): Promise<Import> {
  const job = await getJob(server, ws, importId);
  expect(job).toMatchObject(file.expected);
  const types = await send(server, ws.apiKey, "GET", `${ws.path}/activity-types`);
  expect(types.body.results.map((t: { type: string; count: number }) => [t.type, t.count])).toEqual([
    ["order.placed", file.expected.accepted],
  ]);
  const everyone = await send(server, ws.apiKey, "GET", `${ws.path}/members?limit=1`);
  expect(everyone.body.totalCount).toBe(file.expected.created);
  const feed = await feedAfterImport(server, ws);
  expect(new Set(feed.createdIds).size, "members.created names each member once").toBe(feed.createdIds.length);
  expect(feed.createdIds.length).toBe(file.expected.created);
  for (const memberId of ["m0", "m1", "m1999"]) {
    const page = await send(server, ws.apiKey, "GET", `${ws.path}/members/${memberId}/activities?limit=1000`);
    expect(page.body.results.length, `${memberId}'s timeline`).toBe(file.perMember.get(memberId));
  }
  return job;
}

export async function getJob(server: { baseUrl: string }, ws: Workspace, importId: string): Promise<Import> {
  const reply = await send<Import>(server, ws.apiKey, "GET", `${ws.path}/imports/${importId}`);
  expect(reply.status).toBe(200);
  return reply.body;
}

/**
 * Polls the job until `until` holds, and returns it. Fails when the deadline passes, or when the
 * job ends first (a test waiting for a running job must know it missed it, not wait on).
 */
export async function waitForJob(
  server: { baseUrl: string },
  ws: Workspace,
  importId: string,
  until: (job: Import) => boolean,
  what: string,
  timeoutMs = 90_000,
): Promise<Import> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await getJob(server, ws, importId);
    if (until(job)) return job;
    if (ENDED.includes(job.status)) throw new Error(`the job ended before ${what}: ${JSON.stringify(job)}`);
    if (Date.now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms: ${JSON.stringify(job)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Running, with more than `after` of its `total` rows committed and some still to come. */
export const partWay =
  (total: number, after = 0) =>
  (job: Import) =>
    job.status === "running" && job.rowsRead > after && job.rowsRead < total;

export const hasEnded = (job: Import) => ENDED.includes(job.status);

/**
 * Checks what a user sees once the job has ended: its counts and errors; every member of the
 * file in the audience and the workspace exactly once, with the listings' totals; and in the event
 * feed, each member created once and entering the audience once (a chunk applied twice, or by
 * two processes, would show there). Returns the job.
 */
export async function verifyImport(
  server: { baseUrl: string },
  ws: Workspace,
  ids: { audienceId: string; importId: string },
  file: ImportFile,
): Promise<Import> {
  const job = await getJob(server, ws, ids.importId);
  expect(job).toMatchObject(file.expected);

  const audience = await listAudienceMembers(server, ws.apiKey, `${ws.path}/audiences/${ids.audienceId}/members`);
  expect(audience.totalCounts).toEqual([file.expected.created]);
  const listed = [...audience.members.values()].sort();
  expect(listed.length).toBe(file.emails.length);
  expect(listed).toEqual([...file.emails].sort());
  const everyone = await send(server, ws.apiKey, "GET", `${ws.path}/members?limit=1`);
  expect(everyone.body.totalCount).toBe(file.expected.created);

  const feed = await feedAfterImport(server, ws);
  const idOfEmail = new Map([...audience.members].map(([id, email]) => [email, id]));
  const memberIds = [...audience.members.keys()].sort();
  expect(feed.createdIds.length, "members.created names each member once").toBe(memberIds.length);
  expect([...feed.createdIds].sort()).toEqual(memberIds);
  const entered = feed.enteredIds.get(ids.audienceId) ?? [];
  expect(entered.length, "each member enters the audience once").toBe(memberIds.length);
  expect([...entered].sort()).toEqual(memberIds);
  expect(feed.left).toBe(0);
  expect(feed.updates).toEqual([{ id: idOfEmail.get(file.mergedEmail), changed: ["fields.company"] }]);
  return job;
}

interface FeedEvent {
  type: string;
  data: {
    name?: string;
    audienceId?: string;
    entered?: string[];
    left?: string[];
    memberIds?: string[];
    members?: { id: string; changed: string[] }[];
  };
}

/**
 * The member events of the feed, once everything the import recorded is published: the feed is
 * published after the commits, in the order changes were recorded, so an audience created after
 * the job ended marks the point where the import's events are all in.
 */
export async function feedAfterImport(server: { baseUrl: string }, ws: Workspace) {
  const marker = `feed marker ${Date.now()}`;
  expect((await send(server, ws.apiKey, "POST", `${ws.path}/audiences`, { name: marker })).status).toBe(201);
  const types = "audience.created,audience.members_changed,members.created,members.updated";
  const createdIds: string[] = [];
  const enteredIds = new Map<string, string[]>();
  const updates: { id: string; changed: string[] }[] = [];
  let left = 0;
  let after: string | undefined;
  const deadline = Date.now() + 60_000;
  for (let seen = false; !seen; ) {
    const query = new URLSearchParams({ types, limit: "1000", ...(after ? { after } : {}) });
    const page = await send(server, ws.apiKey, "GET", `${ws.path}/events?${query}`);
    expect(page.status).toBe(200);
    for (const event of page.body.results as FeedEvent[]) {
      const { data } = event;
      if (event.type === "audience.created" && data.name === marker) seen = true;
      if (event.type === "members.created") createdIds.push(...(data.memberIds ?? []));
      if (event.type === "members.updated") updates.push(...(data.members ?? []));
      if (event.type === "audience.members_changed") {
        const audienceId = data.audienceId ?? "";
        enteredIds.set(audienceId, [...(enteredIds.get(audienceId) ?? []), ...(data.entered ?? [])]);
        left += data.left?.length ?? 0;
      }
    }
    after = page.body.pageInfo.endCursor;
    if (seen || page.body.pageInfo.hasNextPage) continue;
    if (Date.now() > deadline) throw new Error("the feed did not publish the import's events within 60 s");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { createdIds, enteredIds, updates, left };
}

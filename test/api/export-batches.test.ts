import { describe, expect } from "vitest";
import { buildApp } from "../../src/app.ts";
import { addMembers, createAudience, createWorkspace } from "../support/factories.ts";
import { test } from "../support/fixture.ts";
import { urlOf } from "../support/live-server.ts";
import { csvRows, download, ndjsonMembers } from "../support/member-files.ts";

const AUDIENCE_MEMBERS = "/v0/workspaces/{workspaceId}/audiences/{audienceId}/members";
const id = (n: number) => `f${String(n).padStart(5, "0")}`;
const ids = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => id(from + i));

/**
 * 17,010 members (numbered in id order, so f00000 is the workspace's first and f17009 its last),
 * 10 of them deleted; an audience of 600 of them from the first bitset chunk and 10 from the third
 * (chunks hold 8,192 numbers), none from the second. Exports are read from a second server on the
 * same store that reads 256 member numbers per statement: many batches, and a chunk to skip.
 */
const it = test.extend("seeded", { scope: "file" }, async ({ server }, { onCleanup }) => {
  const ws = await createWorkspace(server);
  const everyone = await createAudience(ws);
  await addMembers(ws, everyone, { memberIds: ids(0, 10_000) });
  await addMembers(ws, everyone, { memberIds: ids(10_000, 17_010) });
  const audience = await createAudience(ws);
  await addMembers(ws, audience, { memberIds: [...ids(1_000, 1_600), ...ids(17_000, 17_010)] });
  // An instant between the add and the deletion: the record keeps microseconds, the contract milliseconds.
  const beforeDeletion = Date.now();
  while (Date.now() <= beforeDeletion + 1) await new Promise((resolve) => setImmediate(resolve));
  const deleted = ids(1_100, 1_110);
  await ws.api.DELETE("/v0/workspaces/{workspaceId}/members", {
    params: { path: { workspaceId: ws.id } },
    body: { memberIds: deleted },
  });
  const app = await buildApp({
    store: server.store,
    settings: { http: { adminToken: "export-batches-admin" }, exports: { batchSize: 256 } },
  });
  const small = { baseUrl: await app.listen({ port: 0, host: "127.0.0.1" }) };
  onCleanup(() => app.close());
  const kept = (list: string[]) => list.filter((member) => !deleted.includes(member));
  return {
    ws,
    audience,
    small,
    inAudience: kept([...ids(1_000, 1_600), ...ids(17_000, 17_010)]),
    kept,
    beforeDeletion: new Date(beforeDeletion).toISOString(),
  };
});

describe("exports read in many batches", () => {
  // The first test pays for the 17,010 members, on a busy machine sometimes most of a minute.
  it("every member of the audience, in order both ways, across the chunk it skips", { timeout: 180_000 }, async ({
    seeded,
  }) => {
    const { ws, audience, small, inAudience } = seeded;
    const url = (query = "") => urlOf(AUDIENCE_MEMBERS, { workspaceId: ws.id, audienceId: audience }, query);
    const csv = await download(small, ws, url(), "text/csv");
    expect(csvRows(csv.text).map((r) => r.id)).toEqual(inAudience);
    const ndjson = await download(small, ws, url("sortDirection=DESC"), "application/x-ndjson");
    expect(ndjsonMembers(ndjson.text).map((m) => m.id)).toEqual([...inAudience].reverse());
  });

  it("every member of the audience at an earlier instant, from the membership record", async ({ seeded }) => {
    const { ws, audience, small, inAudience, beforeDeletion } = seeded;
    const url = (asOf: string, query = "") =>
      urlOf(AUDIENCE_MEMBERS, { workspaceId: ws.id, audienceId: audience }, `asOf=${encodeURIComponent(asOf)}${query}`);
    // Before the deletion: the deleted members too, by their ids.
    const then = await download(small, ws, url(beforeDeletion), "text/csv");
    expect(csvRows(then.text).map((r) => r.id)).toEqual([...ids(1_000, 1_600), ...ids(17_000, 17_010)]);
    const now = await download(small, ws, url(new Date().toISOString(), "&sortDirection=DESC"), "application/x-ndjson");
    expect(ndjsonMembers(now.text).map((m) => m.id)).toEqual([...inAudience].reverse());
  });

  it("every member of the workspace, the deleted ones left out", async ({ seeded }) => {
    const { ws, small, kept } = seeded;
    const url = urlOf("/v0/workspaces/{workspaceId}/members", { workspaceId: ws.id }, "sortDirection=DESC");
    const csv = await download(small, ws, url, "text/csv");
    expect(csvRows(csv.text).map((r) => r.id)).toEqual(kept(ids(0, 17_010)).reverse());
  });
});

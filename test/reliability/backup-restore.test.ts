import { existsSync } from "node:fs";
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { killProcessGroup, type ServerProcess, send, startServerProcess, stopServerProcess } from "./server-process.ts";

/**
 * docs/operations.md's backup of the embedded store, done as it says: stop the server, copy
 * DATA_DIR whole, and later start a server on the copy. The store is the embedded one whatever
 * TEST_DATABASE_URL says (the server process gets DATA_DIR and no DATABASE_URL): this backup is
 * the embedded store's; PostgreSQL's is pg_dump's. That a running server's directory is locked
 * against a second server is shown in data-dir.test.ts.
 */
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function start(dataDir: string): Promise<ServerProcess> {
  const server = await startServerProcess({ DATA_DIR: dataDir });
  cleanups.push(() => killProcessGroup(server));
  return server;
}

/** What a user sees of an audience: the audience itself and its members, page by page. */
async function snapshot(server: ServerProcess, apiKey: string, audiencePath: string) {
  const audience = await send(server, apiKey, "GET", audiencePath);
  expect(audience.status).toBe(200);
  const members = await send(server, apiKey, "GET", `${audiencePath}/members?limit=500`);
  expect(members.status).toBe(200);
  expect(members.body.pageInfo.hasNextPage).toBe(false);
  return { audience: audience.body, members: members.body.results };
}

describe("backing up the embedded store", () => {
  it("restores an audience and its members exactly as they were from a copy taken while stopped", async () => {
    const original = await tempDir("audience-backup-original-");
    const backups = await tempDir("audience-backup-copies-");
    let server = await start(original);
    const { workspaceId, apiKey } = server.firstStart ?? { workspaceId: "", apiKey: "" };
    const ws = `/v0/workspaces/${workspaceId}`;

    const created = await send(server, apiKey, "POST", `${ws}/audiences`, { name: "Newsletter" });
    expect(created.status).toBe(201);
    const audiencePath = `${ws}/audiences/${created.body.id}`;
    const added = await send(server, apiKey, "POST", `${audiencePath}/members`, {
      members: [
        { id: "mem_ada", email: "ada@example.com", fields: { firstName: "Ada", company: "Analytical Engines" } },
        { email: "grace@example.com", alternativeEmails: ["hopper@example.com"], fields: { firstName: "Grace" } },
      ],
      memberIds: ["mem_no_data"],
    });
    expect(added.body).toEqual({ added: 3, alreadyMembers: 0, created: 3, merged: 0 });
    const atBackup = await snapshot(server, apiKey, audiencePath);
    expect(atBackup.members.map((m: { email: string | null }) => m.email).sort()).toEqual([
      "ada@example.com",
      "grace@example.com",
      null,
    ]);

    // The backup: stop (SIGTERM, as a service manager does), then copy the directory whole.
    await stopServerProcess(server);
    const backup = join(backups, "data");
    await cp(original, backup, { recursive: true, preserveTimestamps: true });
    // A clean stop leaves no lock behind, so the copy starts at once.
    expect(existsSync(join(backup, "server.lock"))).toBe(false);

    // The original changes after the backup: a member leaves, one joins, the audience is renamed.
    server = await start(original);
    expect((await send(server, apiKey, "PATCH", audiencePath, { name: "Renamed later" })).status).toBe(200);
    const joined = await send(server, apiKey, "POST", `${audiencePath}/members`, { memberIds: ["mem_later"] });
    expect(joined.status).toBe(200);
    const left = await send(server, apiKey, "DELETE", `${audiencePath}/members`, { memberIds: ["mem_ada"] });
    expect(left.body).toEqual({ removed: 1, notMembers: 0 });
    const changed = await snapshot(server, apiKey, audiencePath);
    expect(changed.audience.name).toBe("Renamed later");
    expect(changed.members.map((m: { id: string }) => m.id)).toContain("mem_later");
    expect(changed.members.map((m: { id: string }) => m.id)).not.toContain("mem_ada");
    await stopServerProcess(server);
    // The restore: the original is gone, the copy is put in its place and the server started on it.
    await rm(original, { recursive: true, force: true });
    await cp(backup, original, { recursive: true, preserveTimestamps: true });

    const restored = await start(original);
    expect(restored.firstStart).toBeUndefined(); // the same store, not a new one
    expect(await snapshot(restored, apiKey, audiencePath)).toEqual(atBackup);
    // The restored store takes writes.
    const after = await send(restored, apiKey, "POST", `${audiencePath}/members`, { memberIds: ["mem_after"] });
    expect(after.body).toEqual({ added: 1, alreadyMembers: 0, created: 1, merged: 0 });
    await stopServerProcess(restored);
  }, 300_000);
});

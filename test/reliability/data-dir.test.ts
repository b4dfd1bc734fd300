import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { killProcessGroup, type ServerProcess, send, startServerProcess, stopServerProcess } from "./server-process.ts";

/**
 * The embedded store's data directory: one server at a time (a second on the same DATA_DIR used
 * to start, make its own workspace and corrupt or lose the first one's data), and a directory it
 * cannot use is reported in one sentence naming it and the cause.
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

/** Starts a server that is expected to refuse: its output once it has exited. */
async function refusedStart(env: Record<string, string>): Promise<string> {
  const error = await startServerProcess(env).then(
    async (server) => {
      await killProcessGroup(server);
      return new Error(`the server started:\n${server.output()}`);
    },
    (refusal: Error) => refusal,
  );
  expect(error.message).toMatch(/^the server did not start \(exit code [1-9]/);
  return error.message;
}

/** A small tmpfs of this test's own (root only), or undefined where mounting is not allowed. */
async function mountTmpfs(size: string, readOnlyDir?: string): Promise<string | undefined> {
  const dir = await tempDir("audience-mount-");
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], { stdio: "pipe" });
  } catch {
    return undefined;
  }
  cleanups.push(async () => {
    execFileSync("umount", [dir], { stdio: "pipe" });
  });
  if (readOnlyDir) {
    await mkdir(join(dir, readOnlyDir));
    execFileSync("mount", ["-o", "remount,ro", dir], { stdio: "pipe" });
  }
  return dir;
}

describe.skipIf(process.env.TEST_DATABASE_URL)("the embedded store's data directory", () => {
  it("refuses a second server on the same DATA_DIR, and loses nothing of the first one's", async () => {
    const dataDir = await tempDir("audience-lock-");
    let first: ServerProcess | undefined = await startServerProcess({ DATA_DIR: dataDir });
    cleanups.push(async () => {
      if (first) await killProcessGroup(first);
    });
    const { workspaceId, apiKey } = first.firstStart ?? { workspaceId: "", apiKey: "" };
    const ws = `/v0/workspaces/${workspaceId}`;
    expect((await send(first, apiKey, "POST", `${ws}/audiences`, { name: "Before" })).status).toBe(201);

    const refusal = await refusedStart({ DATA_DIR: dataDir });
    expect(refusal).toContain(`Another audience-service process is using the data directory ${dataDir}`);
    expect(refusal).not.toContain("First start");

    // The first server goes on serving and writing.
    expect((await send(first, apiKey, "POST", `${ws}/audiences`, { name: "After" })).status).toBe(201);
    await stopServerProcess(first);
    first = await startServerProcess({ DATA_DIR: dataDir });
    expect(first.firstStart).toBeUndefined();
    const list = await send(first, apiKey, "GET", `${ws}/audiences`);
    expect(list.body.results.map((a: { name: string }) => a.name).sort()).toEqual(["After", "Before"]);
  });

  it("names the directory and the cause when part of its path is a file", async () => {
    const parent = await tempDir("audience-notdir-");
    await writeFile(join(parent, "file"), "");
    const dataDir = join(parent, "file", "data");
    const refusal = await refusedStart({ DATA_DIR: dataDir });
    expect(refusal).toContain(
      `The embedded store cannot use the data directory ${dataDir}: part of the path is a file, not a directory (ENOTDIR).`,
    );
    expect(refusal).not.toMatch(/Failed to start|\[object Object\]/);
  });

  it("names the directory and the cause on a full disk", async (context) => {
    const mount = await mountTmpfs("1m");
    if (!mount) return context.skip("mounting a tmpfs is not allowed here");
    const dataDir = join(mount, "data");
    const refusal = await refusedStart({ DATA_DIR: dataDir });
    expect(refusal).toContain(
      `The embedded store cannot use the data directory ${dataDir}: the disk is full (ENOSPC).`,
    );
    expect(refusal).not.toMatch(/Failed to start|\[object Object\]|PGlite failed/);
    // Nothing half-made is left to be taken for a database at the next start.
    expect((await readdir(dataDir)).filter((name) => name.startsWith("pglite"))).toEqual([]);
  });

  it("names the directory and the cause on a read-only disk", async (context) => {
    const mount = await mountTmpfs("1m", "data");
    if (!mount) return context.skip("mounting a tmpfs is not allowed here");
    const dataDir = join(mount, "data");
    const refusal = await refusedStart({ DATA_DIR: dataDir });
    expect(refusal).toContain(
      `The embedded store cannot use the data directory ${dataDir}: the file system is read-only (EROFS).`,
    );
    expect(refusal).not.toMatch(/Failed to start|\[object Object\]|ENOENT/);
  });
});

import { describe, expect, it } from "vitest";
import { ACTIVITY_ROWS, activityFile } from "./import-activity-file.ts";
import {
  getJob,
  hasEnded,
  importStore,
  partWay,
  uploadActivities,
  uploadTo,
  verifyActivityImport,
  verifyImport,
  type Workspace,
  waitForJob,
} from "./import-checks.ts";
import { CHUNK_ROWS, DATA_ROWS, importFile } from "./import-file.ts";
import { killProcessGroup, type ServerProcess, startServerProcess, stopServerProcess } from "./server-process.ts";

/**
 * An import job survives its process being SIGKILLed mid-file, twice: restarted on the same
 * store, the server takes the job up again after its last committed chunk (the runner's unit,
 * CHUNK_ROWS rows), and the job ends as if nothing had happened: every row applied once, the counts,
 * errors, members and events exactly those of the file.
 */
const KILLS = 2;

const storeName = process.env.TEST_DATABASE_URL ? "PostgreSQL" : "embedded store (PGlite)";

describe(`an import job killed with SIGKILL on the ${storeName}`, () => {
  it("resumes after its last committed chunk on restart and ends with every row applied exactly once", async () => {
    const store = await importStore();
    const file = importFile();
    let server: ServerProcess = await startServerProcess(store.env);
    try {
      expect(server.firstStart, server.output()).toBeDefined();
      const { workspaceId, apiKey } = server.firstStart ?? { workspaceId: "", apiKey: "" };
      const ws = { apiKey, path: `/v0/workspaces/${workspaceId}` };
      const ids = await uploadTo(server, ws, file.csv);

      const kills: { seen: number; afterRestart: number }[] = [];
      for (let kill = 1; kill <= KILLS; kill++) {
        // Each kill comes once the job has committed chunks since the last one, with more to come.
        const before = kills.at(-1)?.seen ?? 0;
        const running = await waitForJob(server, ws, ids.importId, partWay(DATA_ROWS, before), `kill ${kill}`);
        await killProcessGroup(server);
        server = await startServerProcess(store.env);
        expect(server.firstStart, "a restart must not create another workspace").toBeUndefined();
        // A chunk may have committed between the poll and the kill, but none can be lost, and
        // none half-applied: the job stands at a chunk's end.
        const restarted = await getJob(server, ws, ids.importId);
        expect(restarted.rowsRead).toBeGreaterThanOrEqual(running.rowsRead);
        if (!hasEnded(restarted)) expect(restarted.rowsRead % CHUNK_ROWS).toBe(0);
        kills.push({ seen: running.rowsRead, afterRestart: restarted.rowsRead });
      }

      await waitForJob(server, ws, ids.importId, hasEnded, "the job's end");
      const job = await verifyImport(server, ws, ids, file);
      console.log(
        `import-crash: ${storeName}: ${DATA_ROWS} data rows, ${KILLS} SIGKILLs, ` +
          `rowsRead at each kill ${kills.map((k) => `${k.seen} (${k.afterRestart} on restart)`).join(", ")}; ` +
          `final: ${job.status}, rowsRead ${job.rowsRead}, created ${job.created}, merged ${job.merged}, ` +
          `unchanged ${job.unchanged}, rejected ${job.rejected} (lines ${job.errors.map((e) => e.line).join(", ")}); ` +
          `${file.emails.length} members listed once each, each created and entering the audience once in the feed`,
      );
    } finally {
      await stopServerProcess(server);
      await store.drop();
    }
  }, 300_000);

  it("resumes a file of activities the same way: each row stored once, the counts exactly the file's", async () => {
    const store = await importStore();
    const file = activityFile();
    let server: ServerProcess = await startServerProcess(store.env);
    try {
      const { workspaceId, apiKey } = server.firstStart ?? { workspaceId: "", apiKey: "" };
      const ws: Workspace = { apiKey, path: `/v0/workspaces/${workspaceId}` };
      const importId = await uploadActivities(server, ws, file.csv);
      let seen = 0;
      for (let kill = 1; kill <= KILLS; kill++) {
        const running = await waitForJob(server, ws, importId, partWay(ACTIVITY_ROWS, seen), `kill ${kill}`);
        seen = running.rowsRead;
        await killProcessGroup(server);
        server = await startServerProcess(store.env);
        const restarted = await getJob(server, ws, importId);
        expect(restarted.rowsRead).toBeGreaterThanOrEqual(running.rowsRead);
        if (!hasEnded(restarted)) expect(restarted.rowsRead % CHUNK_ROWS).toBe(0);
      }
      await waitForJob(server, ws, importId, hasEnded, "the job's end");
      await verifyActivityImport(server, ws, importId, file);
    } finally {
      await stopServerProcess(server);
      await store.drop();
    }
  }, 300_000);
});

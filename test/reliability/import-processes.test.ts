import { describe, expect, it } from "vitest";
import { ACTIVITY_ROWS, activityFile } from "./import-activity-file.ts";
import {
  hasEnded,
  importStore,
  partWay,
  uploadActivities,
  uploadTo,
  verifyActivityImport,
  verifyImport,
  waitForJob,
} from "./import-checks.ts";
import { CHUNK_ROWS, DATA_ROWS, importFile } from "./import-file.ts";
import { killProcessGroup, type ServerProcess, startServerProcess, stopServerProcess } from "./server-process.ts";

/**
 * Import jobs with two server processes on one database: the job runs in one process at a time
 * (its lease), every row is applied once, and when the process running it is SIGKILLed the other
 * one takes the job over once the lease runs out and finishes it.
 */

/** Rows this process applied (every outcome), from its GET /metrics: which process ran the job. */
async function rowsApplied(server: ServerProcess): Promise<number> {
  const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
  const counts = [...text.matchAll(/^audience_import_rows_total\{outcome="\w+"\} (\S+)$/gm)];
  return counts.reduce((sum, [, value]) => sum + Number(value), 0);
}

/** Two processes on a fresh database; the first one's start made the workspace. */
async function startTwo(env: Record<string, string>) {
  const first = await startServerProcess(env);
  const servers = [first];
  try {
    servers.push(await startServerProcess(env));
  } catch (error) {
    await killProcessGroup(first);
    throw error;
  }
  const { workspaceId, apiKey } = first.firstStart ?? { workspaceId: "", apiKey: "" };
  expect(first.firstStart, first.output()).toBeDefined();
  return { servers, ws: { apiKey, path: `/v0/workspaces/${workspaceId}` } };
}

// Only on PostgreSQL: the embedded store locks its DATA_DIR to one process (data-dir.test.ts), so
// two processes cannot share it.
describe.skipIf(!process.env.TEST_DATABASE_URL)("an import job with two server processes on PostgreSQL", () => {
  it("runs once: each row applied by one process, the counts and the members exactly the file's", async () => {
    const store = await importStore();
    const file = importFile();
    const { servers, ws } = await startTwo(store.env);
    const [a, b] = servers as [ServerProcess, ServerProcess];
    try {
      const ids = await uploadTo(a, ws, file.csv);
      // Followed and checked through the process that was not sent the file.
      await waitForJob(b, ws, ids.importId, hasEnded, "the job's end");
      const job = await verifyImport(b, ws, ids, file);
      // Each process counts the rows it applied, once committed: together, the file once.
      const applied = [await rowsApplied(a), await rowsApplied(b)];
      expect(applied.reduce((sum, rows) => sum + rows, 0)).toBe(DATA_ROWS);
      console.log(
        `import-crash: two processes: ${DATA_ROWS} data rows, rows applied by each process ${applied.join(" and ")}; ` +
          `final: ${job.status}, rowsRead ${job.rowsRead}, created ${job.created}, merged ${job.merged}, ` +
          `unchanged ${job.unchanged}, rejected ${job.rejected}; ${file.emails.length} members listed once each`,
      );
    } finally {
      await Promise.all(servers.map(stopServerProcess));
      await store.drop();
    }
  }, 300_000);

  it("runs a file of activities once too: each row applied by one process, the counts exactly the file's", async () => {
    const store = await importStore();
    const file = activityFile();
    const { servers, ws } = await startTwo(store.env);
    const [a, b] = servers as [ServerProcess, ServerProcess];
    try {
      const importId = await uploadActivities(a, ws, file.csv);
      await waitForJob(b, ws, importId, hasEnded, "the job's end");
      await verifyActivityImport(b, ws, importId, file);
      const applied = [await rowsApplied(a), await rowsApplied(b)];
      expect(applied.reduce((sum, rows) => sum + rows, 0)).toBe(ACTIVITY_ROWS);
    } finally {
      await Promise.all(servers.map(stopServerProcess));
      await store.drop();
    }
  }, 300_000);

  it("is taken over by the other process when the one running it is killed with SIGKILL", async () => {
    const store = await importStore();
    const file = importFile();
    const { servers, ws } = await startTwo(store.env);
    try {
      const ids = await uploadTo(servers[0] as ServerProcess, ws, file.csv);
      const running = await waitForJob(servers[1] as ServerProcess, ws, ids.importId, partWay(DATA_ROWS), "a kill");
      // The process holding the job is the one that has applied rows; the other has applied none.
      const applied = await Promise.all(servers.map(rowsApplied));
      const holder = applied.findIndex((rows) => rows > 0);
      const holders = applied.filter((rows) => rows > 0);
      expect(holders, `rows applied by each process: ${applied}`).toHaveLength(1);
      await killProcessGroup(servers[holder] as ServerProcess);
      const survivor = servers[1 - holder] as ServerProcess;

      await waitForJob(survivor, ws, ids.importId, hasEnded, "the job's end");
      const job = await verifyImport(survivor, ws, ids, file);
      // The survivor applied what the killed process had not committed, and nothing more.
      const takenOver = await rowsApplied(survivor);
      expect(takenOver).toBeGreaterThan(0);
      expect(takenOver).toBeLessThanOrEqual(DATA_ROWS - running.rowsRead);
      expect((DATA_ROWS - takenOver) % CHUNK_ROWS, "the killed process committed whole chunks").toBe(0);
      console.log(
        `import-crash: takeover: ${DATA_ROWS} data rows, 1 SIGKILL of the process running the job ` +
          `(process ${holder + 1} of 2) at rowsRead ${running.rowsRead}, rows applied by the survivor ${takenOver}; ` +
          `final: ${job.status}, rowsRead ${job.rowsRead}, created ${job.created}, merged ${job.merged}, ` +
          `unchanged ${job.unchanged}, rejected ${job.rejected}; ${file.emails.length} members listed once each`,
      );
    } finally {
      await Promise.all(servers.map(stopServerProcess));
      await store.drop();
    }
  }, 300_000);
});

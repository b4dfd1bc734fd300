import { describe, expect } from "vitest";
import { createWorkspace } from "../support/factories.ts";
import { test } from "../support/fixture.ts";
import { csvOf, getImport, importCsv, importEnded, uploadCsv } from "../support/imports.ts";
import { startLiveServer } from "../support/live-server.ts";

/** Chunks of 100 rows: a file of 20,000 rows is 200 transactions, a long job on either store. */
// biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
const it = test.extend("server", { scope: "file" }, async ({}, { onCleanup }) => {
  const server = await startLiveServer({ settings: { imports: { chunkRows: 100 } } });
  onCleanup(() => server.close());
  return server;
});

const largeFile = (prefix: string, rows = 20_000) =>
  csvOf([["email"], ...Array.from({ length: rows }, (_, i) => [`${prefix}${i}@example.com`])]);

describe("import jobs of different workspaces", () => {
  it("a one-row import ends while another workspace's large import, begun first, is still running", async ({
    server,
    ws,
  }) => {
    const large = await uploadCsv(ws, largeFile("large"));
    await expect
      .poll(async () => (await getImport(ws, large.id)).rowsRead, { timeout: 120_000, interval: 20 })
      .toBeGreaterThan(0);

    const other = await createWorkspace(server);
    const small = await importCsv(other, "email\nsmall@example.com\n");
    expect(small).toMatchObject({ status: "succeeded", created: 1 });
    // Read after the small job ended: the large one has not.
    const meanwhile = await getImport(ws, large.id);
    expect(meanwhile.status).toBe("running");
    expect(meanwhile.rowsRead).toBeLessThan(20_000);

    // Its end is not waited for: cancelled, it stops after the chunk being applied.
    const cancelled = await ws.api.DELETE("/v0/workspaces/{workspaceId}/imports/{importId}", {
      params: { path: { workspaceId: ws.id, importId: large.id } },
    });
    expect(cancelled.status).toBe("cancelled");
    // Bounded generously: a loaded machine makes the large upload slow, not the order different.
  }, 180_000);

  it("a workspace's own jobs still run one after another, in order", async ({ ws }) => {
    const first = await uploadCsv(ws, largeFile("first", 1_000));
    const second = await uploadCsv(ws, "email\nsecond@example.com\n");
    const secondEnded = await importEnded(ws, second.id);
    const firstNow = await getImport(ws, first.id);
    expect(firstNow.status).toBe("succeeded");
    expect(Date.parse(firstNow.finishedAt ?? "")).toBeLessThanOrEqual(Date.parse(secondEnded.finishedAt ?? ""));
  });
});

import { describe, expect } from "vitest";
import { rejectionOf } from "../support/checked-client.ts";
import { allMemberIds, createAudience } from "../support/factories.ts";
import { it } from "../support/fixture.ts";
import { csvOf, importCsv, importEnded, uploadCsv } from "../support/imports.ts";
import { metricSample } from "../support/metrics.ts";

const JOB = "/v0/workspaces/{workspaceId}/imports/{importId}";
/** Three chunks on PostgreSQL (10,000 rows), thirty embedded (1,000): long enough to be stopped while it runs. */
const bigFile = (prefix: string) =>
  csvOf([["email", "company"], ...Array.from({ length: 30_000 }, (_, i) => [`${prefix}${i}@example.com`, "Acme"])]);

const memberCount = async (api: import("@audience-service/client").AudienceClient, workspaceId: string) =>
  (await api.GET("/v0/workspaces/{workspaceId}/members", { params: { path: { workspaceId }, query: { limit: 1 } } }))
    .totalCount;

describe("import jobs as they run", () => {
  it("a cancelled job stops after the chunk being applied; its counts say exactly what was applied", async ({
    ws,
    api,
  }) => {
    const job = await uploadCsv(ws, bigFile("c"));
    const cancelled = await api.DELETE(JOB, { params: { path: { workspaceId: ws.id, importId: job.id } } });
    expect(cancelled.status).toBe("cancelled");
    // Whole chunks: 1,000 rows on the embedded store, 10,000 on PostgreSQL.
    expect(cancelled.rowsRead % 1_000).toBe(0);
    expect(cancelled.rowsRead).toBeLessThan(30_000);
    expect(cancelled.created).toBe(cancelled.rowsRead);
    expect(await memberCount(api, ws.id)).toBe(cancelled.created);

    // A workspace's jobs run one at a time: once a later job has run, the cancelled one is over.
    const later = await importCsv(ws, "email\nlater@example.com\n");
    expect(later.status).toBe("succeeded");
    expect(await api.GET(JOB, { params: { path: { workspaceId: ws.id, importId: job.id } } })).toEqual(cancelled);
    expect(await memberCount(api, ws.id)).toBe(cancelled.created + 1);
  });

  it("keeps the file's name given at upload, and answers none for a job uploaded without one", async ({ ws, api }) => {
    const named = await ws.api.POST("/v0/workspaces/{workspaceId}/imports", {
      params: { path: { workspaceId: ws.id }, query: { name: "contacts november.csv" } },
      body: "email\nada@example.com\n",
      bodySerializer: (body: unknown) => body as string,
      headers: { "content-type": "text/csv" },
    });
    expect(named.name).toBe("contacts november.csv");
    expect((await importEnded(ws, named.id)).name).toBe("contacts november.csv");
    const unnamed = await importCsv(ws, "email\ngrace@example.com\n");
    expect(unnamed).not.toHaveProperty("name");
    const { results } = await api.GET("/v0/workspaces/{workspaceId}/imports", {
      params: { path: { workspaceId: ws.id } },
    });
    expect(results.map((job) => job.name)).toEqual([undefined, "contacts november.csv"]);
  });

  it("a job that ended otherwise cannot be cancelled: 409 import_finished", async ({ ws, api }) => {
    const job = await importCsv(ws, "email\nada@example.com\n");
    const refused = await rejectionOf(api.DELETE(JOB, { params: { path: { workspaceId: ws.id, importId: job.id } } }));
    expect([refused.status, refused.code]).toEqual([409, "import_finished"]);
  });

  it("fails, with the reason and the counts of what was applied, when its audience is archived meanwhile", async ({
    ws,
    api,
  }) => {
    const audienceId = await createAudience(ws);
    const queued = await uploadCsv(ws, bigFile("a"), audienceId);
    await api.DELETE("/v0/workspaces/{workspaceId}/audiences/{audienceId}", {
      params: { path: { workspaceId: ws.id, audienceId } },
    });
    const job = await importEnded(ws, queued.id);
    expect(job.status).toBe("failed");
    expect(job.failureReason).toMatch(/is archived/);
    expect(job.rowsRead).toBeLessThan(30_000);
    expect(job.created).toBe(job.rowsRead);
    expect((await allMemberIds(ws, audienceId)).length).toBe(job.created);
  });

  it("ends failed at a quote that is never closed, after applying every row before it", async ({ ws }) => {
    const job = await importCsv(ws, 'email,note\nada@example.com,fine\nbob@example.com,"never closed\nx,y\n');
    expect(job).toMatchObject({
      status: "failed",
      rowsRead: 1,
      created: 1,
      failureReason: "line 3: a quoted field is not closed before the end of the file",
    });
  });

  it("rejects a row over the row limit by itself, with its line, and applies the rows after it", async ({ ws }) => {
    const long = "x".repeat(1_048_577);
    const csv = `email,note\nada@example.com,fine\nbob@example.com,${long}\ncy@example.com,"two\nlines"\ndee@example.com,ok\n`;
    const job = await importCsv(ws, csv);
    expect(job).toMatchObject({
      status: "succeeded",
      rowsRead: 4,
      created: 3,
      rejected: 1,
      errors: [{ line: 3, message: "longer than 1 MiB (1,048,576 bytes; is a quote not closed?)" }],
    });
  });

  it("counts imported rows by outcome in GET /metrics", async ({ server, ws }) => {
    const scrape = (outcome: string) =>
      metricSample(server.baseUrl, `audience_import_rows_total{outcome="${outcome}"}`);
    const [created, rejected] = [await scrape("created"), await scrape("rejected")];
    await importCsv(ws, "email\nm1@example.com\nm2@example.com\nnot-an-email\n");
    expect(await scrape("created")).toBe(created + 2);
    expect(await scrape("rejected")).toBe(rejected + 1);
  });
});

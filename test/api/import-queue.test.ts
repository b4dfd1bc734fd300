import { describe, expect } from "vitest";
import { rejectionOf } from "../support/checked-client.ts";
import { createWorkspace } from "../support/factories.ts";
import { test } from "../support/fixture.ts";
import { uploadCsv, uploadRaw } from "../support/imports.ts";
import { startLiveServer } from "../support/live-server.ts";

/** Jobs as clients see them while no runner takes them: the background work is off in this file. */
// biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
const it = test.extend("server", { scope: "file" }, async ({}, { onCleanup }) => {
  const server = await startLiveServer({ workers: false });
  onCleanup(() => server.close());
  return server;
});

const JOB = "/v0/workspaces/{workspaceId}/imports/{importId}";

describe("import jobs waiting for a runner", () => {
  it("getImport shows a queued job; an unknown one, or one of another workspace, is 404", async ({
    server,
    ws,
    api,
  }) => {
    const job = await uploadCsv(ws, "email\nada@example.com\n");
    const read = await api.GET(JOB, { params: { path: { workspaceId: ws.id, importId: job.id } } });
    expect(read).toEqual(job);
    expect(read).toMatchObject({ status: "queued", audienceId: null, finishedAt: null, errors: [] });

    const unknown = await rejectionOf(
      api.GET(JOB, { params: { path: { workspaceId: ws.id, importId: "imp_nothing" } } }),
    );
    expect([unknown.status, unknown.code]).toEqual([404, "import_not_found"]);
    const other = await createWorkspace(server);
    const foreign = await rejectionOf(
      other.api.GET(JOB, { params: { path: { workspaceId: other.id, importId: job.id } } }),
    );
    expect([foreign.status, foreign.code]).toEqual([404, "import_not_found"]);
  });

  it("listImports gives the most recent jobs first, as many as asked", async ({ ws, api }) => {
    const jobs = [];
    for (let i = 0; i < 3; i++) jobs.push(await uploadCsv(ws, `email\nm${i}@example.com\n`));
    const list = await api.GET("/v0/workspaces/{workspaceId}/imports", { params: { path: { workspaceId: ws.id } } });
    expect(list.results.map((j) => j.id)).toEqual(jobs.map((j) => j.id).reverse());
    const two = await api.GET("/v0/workspaces/{workspaceId}/imports", {
      params: { path: { workspaceId: ws.id }, query: { limit: 2 } },
    });
    expect(two.results.map((j) => j.id)).toEqual([jobs[2]?.id, jobs[1]?.id]);
  });

  it("cancelImport cancels a queued job, removes its file, and returns it again when repeated", async ({
    server,
    ws,
    api,
  }) => {
    const job = await uploadCsv(ws, "email\nada@example.com\n");
    const path = { workspaceId: ws.id, importId: job.id };
    const cancelled = await api.DELETE(JOB, { params: { path } });
    expect(cancelled).toMatchObject({ id: job.id, status: "cancelled", rowsRead: 0, created: 0 });
    expect(cancelled.finishedAt).not.toBeNull();
    expect(await api.DELETE(JOB, { params: { path } })).toEqual(cancelled);
    const [parts] = await server.store.db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM import_parts WHERE workspace_id = ${ws.id}`;
    expect(parts?.n).toBe(0);
  });

  it("409 too_many_imports beyond 10 jobs that have not ended; cancelling one makes room", async ({ ws, api }) => {
    const jobs = [];
    for (let i = 0; i < 10; i++) jobs.push(await uploadCsv(ws, `email\nm${i}@example.com\n`));
    const refused = await rejectionOf(uploadCsv(ws, "email\nmore@example.com\n"));
    expect([refused.status, refused.code]).toEqual([409, "too_many_imports"]);
    await api.DELETE(JOB, { params: { path: { workspaceId: ws.id, importId: jobs[0]?.id ?? "" } } });
    expect((await uploadCsv(ws, "email\nmore@example.com\n")).status).toBe("queued");
  });

  it("the limit holds for uploads that arrive at once: 25 together, exactly 10 accepted", async ({
    server,
    ws,
    api,
  }) => {
    const answers = await Promise.all(
      Array.from({ length: 25 }, (_, i) => uploadRaw(server, ws, `email\nat-once-${i}@example.com\n`)),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array(10).fill(202), ...Array(15).fill(409)]);
    for (const answer of answers) if (answer.status === 409) expect(answer.problem?.code).toBe("too_many_imports");
    const listed = await api.GET("/v0/workspaces/{workspaceId}/imports", {
      params: { path: { workspaceId: ws.id }, query: { limit: 100 } },
    });
    expect(listed.results.length).toBe(10);
  });
});

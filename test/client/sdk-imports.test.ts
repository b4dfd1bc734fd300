// The SDK for imports: upload a CSV file, follow the job, list and cancel jobs. Every response is
// checked against the contract. (File exports are plain GETs with an Accept header: see
// test/api/export-audience.test.ts and the CLI's tests.)
import { describe, expect } from "vitest";
import { notCalled, operationsTagged, rejectionOf } from "../support/checked-client.ts";
import { createAudience } from "../support/factories.ts";
import { it } from "../support/fixture.ts";
import { importEnded, uploadCsv } from "../support/imports.ts";

const TAGS = ["Imports and exports"];
const IMPORT = "/v0/workspaces/{workspaceId}/imports/{importId}";

describe("imports through the SDK", () => {
  it("uploads a file, follows its job to the end, lists it, and cannot cancel it once ended", async ({
    api,
    workspaceId,
    ws,
  }) => {
    const audienceId = await createAudience(ws, "Imported");
    const queued = await uploadCsv(ws, "email,firstName\nada@example.com,Ada\nnot-an-address,Bad\n", audienceId);
    expect(queued).toMatchObject({ status: "queued", audienceId, bytes: 55 });
    const job = await importEnded(ws, queued.id);
    expect(job).toMatchObject({ status: "succeeded", rowsRead: 2, created: 1, rejected: 1 });
    expect(job.errors.map((e) => e.line)).toEqual([3]);

    const { results } = await api.GET("/v0/workspaces/{workspaceId}/imports", {
      params: { path: { workspaceId }, query: { limit: 5 } },
    });
    expect(results.map((j) => j.id)).toEqual([queued.id]);
    const error = await rejectionOf(api.DELETE(IMPORT, { params: { path: { workspaceId, importId: queued.id } } }));
    expect(error).toMatchObject({ status: 409, code: "import_finished" });
    const unknown = await rejectionOf(api.GET(IMPORT, { params: { path: { workspaceId, importId: "imp_none" } } }));
    expect(unknown).toMatchObject({ status: 404, code: "import_not_found" });
  });
});

describe("coverage", () => {
  it(`called every ${TAGS.join(", ")} operation through the SDK`, () => {
    const expected = operationsTagged(TAGS);
    expect(expected.length).toBe(4);
    expect(notCalled(expected)).toEqual([]);
  });
});

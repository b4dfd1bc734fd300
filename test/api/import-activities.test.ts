// A CSV file of activities through the import jobs: each row is an ingest's entry, stored by the
// ingest's own write; a bad row is rejected with its line and the rest goes on.
import { describe, expect } from "vitest";
import { rejectionOf } from "../support/checked-client.ts";
import { createAudience, type TestWorkspace, upsertMembers } from "../support/factories.ts";
import { it } from "../support/fixture.ts";
import { csvOf, importActivityCsv, uploadCsv } from "../support/imports.ts";

const DAY = 86_400_000;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

const timeline = (ws: TestWorkspace, memberId: string) =>
  ws.api.GET("/v0/workspaces/{workspaceId}/members/{memberId}/activities", {
    params: { path: { workspaceId: ws.id, memberId }, query: {} },
  });
const types = (ws: TestWorkspace) =>
  ws.api.GET("/v0/workspaces/{workspaceId}/activity-types", { params: { path: { workspaceId: ws.id } } });

describe("importing a file of activities", () => {
  it("stores each row as the ingest does, reads properties as numbers and booleans, and rejects bad rows by line", async ({
    ws,
  }) => {
    await upsertMembers(ws, [{ id: "ada", email: "ada@example.com" }]);
    const csv = csvOf([
      ["memberId", "email", "type", "occurredAt", "id", "properties.amount", "properties.gift", "properties.code"],
      ["", "ADA@example.com ", "order.placed", ago(DAY), "o1", "59.90", "false", "007"],
      ["bob", "", "order.placed", ago(2 * DAY), "o2", "12", "true", "A-1"],
      ["bob", "", "bad type", ago(DAY), "", "", "", ""],
      ["", "", "order.placed", ago(DAY), "", "", "", ""],
      ["bob", "", "order.placed", new Date(Date.now() + 600_000).toISOString(), "", "", "", ""],
      ["ada", "", "order.placed", ago(DAY), "o1", "", "", ""],
      ["cy", "", "session.attended", ago(401 * DAY), "", "", "", ""],
      ["cy", "", "session.attended", "", "", "", "", "x".repeat(1001)],
      ["ada", "", "session.attended", "", "", "", "", ""],
    ]);
    const job = await importActivityCsv(ws, csv);
    expect(job).toMatchObject({
      kind: "activities",
      status: "succeeded",
      rowsRead: 9,
      accepted: 3,
      duplicates: 1,
      expired: 1,
      created: 1,
      merged: 0,
      unchanged: 0,
      rejected: 4,
      errors: [
        { line: 4, message: expect.stringMatching(/^type: /) },
        { line: 5, message: "has neither a memberId nor an email" },
        { line: 6, message: "occurredAt: is more than 5 minutes in the future" },
        { line: 9, message: expect.stringMatching(/^properties\.code: /) },
      ],
    });
    const ada = await timeline(ws, "ada");
    expect(ada.results.map((a) => [a.id, a.type, a.properties])).toEqual([
      [null, "session.attended", {}],
      ["o1", "order.placed", { amount: 59.9, gift: false, code: "007" }],
    ]);
    expect((await timeline(ws, "bob")).results.map((a) => a.properties)).toEqual([
      { amount: 12, gift: true, code: "A-1" },
    ]);
    // The expired row created no member.
    expect(
      (
        await rejectionOf(
          ws.api.GET("/v0/workspaces/{workspaceId}/members/{memberId}", {
            params: { path: { workspaceId: ws.id, memberId: "cy" } },
          }),
        )
      ).status,
    ).toBe(404);
    expect((await types(ws)).results.find((t) => t.type === "order.placed")).toMatchObject({
      count: 2,
      properties: [
        { key: "amount", types: ["number"] },
        { key: "code", types: ["string"] },
        { key: "gift", types: ["boolean"] },
      ],
    });
  });

  it("counts a file imported again as duplicates, row by row", async ({ ws }) => {
    const csv = csvOf([
      ["memberId", "type", "id"],
      ["m1", "session.attended", "s1"],
      ["m2", "session.attended", "s2"],
    ]);
    expect(await importActivityCsv(ws, csv)).toMatchObject({ accepted: 2, duplicates: 0, created: 2 });
    expect(await importActivityCsv(ws, csv)).toMatchObject({ accepted: 0, duplicates: 2, created: 0 });
  });

  const badHeaders: [string, string, RegExp][] = [
    ["no type column", "memberId,occurredAt\n", /must name a type column/],
    ["no member column", "type,id\n", /must name a memberId or an email column/],
    ["an unknown column", "memberId,type,amount\n", /Column 3 of the header, "amount", is not memberId/],
    ["a property key that is not a key", "memberId,type,properties.1x\n", /"properties\.1x"/],
  ];
  for (const [what, csv, detail] of badHeaders) {
    it(`refuses a header with ${what}: 400 invalid_csv, nothing stored`, async ({ ws }) => {
      const error = await rejectionOf(uploadCsv(ws, csv, undefined, "activities"));
      expect([error.status, error.code]).toEqual([400, "invalid_csv"]);
      expect(error.problem?.detail).toMatch(detail);
    });
  }

  it("takes no audienceId: 400 invalid_request", async ({ ws }) => {
    const audienceId = await createAudience(ws);
    const error = await rejectionOf(uploadCsv(ws, "memberId,type\nm1,t\n", audienceId, "activities"));
    expect([error.status, error.code]).toEqual([400, "invalid_request"]);
  });

  it("lists a job of members as kind members, with no activity counts", async ({ ws }) => {
    const job = await uploadCsv(ws, "email\nada@example.com\n");
    expect(job).toMatchObject({ kind: "members", accepted: 0, duplicates: 0, expired: 0 });
  });
});

import { describe, expect } from "vitest";
import { allMemberIds, createAudience, upsertMembers } from "../support/factories.ts";
import { it } from "../support/fixture.ts";
import { csvOf, importCsv, uploadCsv } from "../support/imports.ts";

const HEADER = ["email", "firstName", "lastName", "company", "plan"];

describe("createImport: a CSV file's rows become members", () => {
  it("queues the job (202, Location), then applies every row with the counts of what it did", async ({ ws, api }) => {
    const audienceId = await createAudience(ws);
    await upsertMembers(ws, [{ email: "grace@example.com", fields: { company: "Navy" } }]);
    const csv = csvOf([
      HEADER,
      ["ada@example.com", "Ada", "Lovelace", "Analytical Engines", "pro"],
      ["grace@example.com", "Grace", "Hopper", "", "free"],
      ["GRACE@example.com", "", "", "", ""],
    ]);
    const queued = await uploadCsv(ws, csv, audienceId);
    expect(queued).toMatchObject({ audienceId, status: "queued", bytes: Buffer.byteLength(csv), rowsRead: 0 });

    const job = await importCsv(ws, csv, audienceId);
    expect(job).toMatchObject({
      status: "succeeded",
      rowsRead: 3,
      created: 0,
      merged: 0,
      unchanged: 3,
      rejected: 0,
      errors: [],
      failureReason: null,
    });
    const first = await api.GET("/v0/workspaces/{workspaceId}/imports/{importId}", {
      params: { path: { workspaceId: ws.id, importId: queued.id } },
    });
    expect(first).toMatchObject({ status: "succeeded", rowsRead: 3, created: 1, merged: 1, unchanged: 1 });
    expect(first.finishedAt).not.toBeNull();

    const members = await api.GET("/v0/workspaces/{workspaceId}/audiences/{audienceId}/members", {
      params: { path: { workspaceId: ws.id, audienceId }, query: { sortDirection: "ASC" } },
    });
    expect(members.results.map((m) => [m.email, m.fields])).toEqual([
      ["grace@example.com", { firstName: "Grace", lastName: "Hopper", role: "", company: "Navy", plan: "free" }],
      [
        "ada@example.com",
        { firstName: "Ada", lastName: "Lovelace", role: "", company: "Analytical Engines", plan: "pro" },
      ],
    ]);
  });

  it("reads ids, alternative e-mails separated by ;, and joins no audience without audienceId", async ({ ws, api }) => {
    const job = await importCsv(
      ws,
      csvOf([
        ["id", "email", "alternativeEmails", "role"],
        ["m-1", "", " one@example.com ; two@example.com;", "Engineer"],
        ["m-2", "", "", ""],
      ]),
    );
    expect(job).toMatchObject({ status: "succeeded", rowsRead: 2, created: 2, audienceId: null });
    const member = await api.GET("/v0/workspaces/{workspaceId}/members/{memberId}", {
      params: { path: { workspaceId: ws.id, memberId: "m-1" } },
    });
    expect(member).toMatchObject({
      id: "m-1",
      email: null,
      alternativeEmails: ["one@example.com", "two@example.com"],
      fields: { role: "Engineer" },
    });
  });

  it("rejects bad rows with their line and reason, and applies the rest", async ({ ws }) => {
    const audienceId = await createAudience(ws);
    await upsertMembers(ws, [
      { id: "owner-a", email: "a@example.com" },
      { id: "owner-b", email: "b@example.com" },
    ]);
    const csv = csvOf([
      ["id", "email", "alternativeEmails", "company"],
      ["", "ok1@example.com", "", "Acme"],
      ["", "not-an-email", "", ""],
      ["", "ok2@example.com", "", "Acme", "extra"],
      ["x".repeat(256), "", "", ""],
      ["", "ok3@example.com", "", "y".repeat(1025)],
      ["", "a@example.com", "b@example.com", ""],
      ["owner-a", "b@example.com", "", ""],
      ["", "ok4@example.com", "bad address", ""],
      ["", "", "", "Acme"],
      ["", "ok5@example.com", "", ""],
    ]);
    const job = await importCsv(ws, csv, audienceId);
    expect(job).toMatchObject({ status: "succeeded", rowsRead: 10, created: 2, merged: 0, rejected: 8 });
    expect(job.errors).toEqual([
      { line: 3, message: "email: not a valid e-mail address" },
      { line: 4, message: "expected 4 columns, found 5" },
      { line: 5, message: "id: longer than 255 characters" },
      { line: 6, message: "company: longer than 1024 characters" },
      { line: 7, message: "its e-mails belong to two different members: owner-a and owner-b" },
      { line: 8, message: "its id names member owner-a, but its e-mails belong to member owner-b" },
      { line: 9, message: 'alternativeEmails: "bad address" is not a valid e-mail address' },
      { line: 10, message: "has neither an id nor an email" },
    ]);
    expect((await allMemberIds(ws, audienceId)).length).toBe(2);
  });

  it("reads a BOM, CRLF and quoted fields with commas, quotes and line breaks, with the right line numbers", async ({
    ws,
    api,
  }) => {
    const csv =
      "\uFEFFemail,company,note\r\n" +
      'ada@example.com,"Engines, Ltd","said ""hi""\r\nand left"\r\n' +
      "\r\n" +
      "bad,,\r\n" +
      'bob@example.com,"Multi\nline\nInc",ok\r\n' +
      "bad2,,\r\n";
    const job = await importCsv(ws, csv);
    expect(job).toMatchObject({ status: "succeeded", rowsRead: 4, created: 2, rejected: 2 });
    expect(job.errors.map((e) => e.line)).toEqual([5, 9]);
    const page = await api.GET("/v0/workspaces/{workspaceId}/members", { params: { path: { workspaceId: ws.id } } });
    // Members created by one chunk share their creation time: compared by e-mail, not in page order.
    expect(Object.fromEntries(page.results.map((m) => [m.email, m.fields]))).toEqual({
      "ada@example.com": {
        firstName: "",
        lastName: "",
        role: "",
        company: "Engines, Ltd",
        note: 'said "hi"\r\nand left',
      },
      "bob@example.com": { firstName: "", lastName: "", role: "", company: "Multi\nline\nInc", note: "ok" },
    });
  });

  it("imports a file larger than the JSON API's 1 MiB body limit, in several chunks", async ({ ws }) => {
    const audienceId = await createAudience(ws);
    const rows = Array.from({ length: 12_000 }, (_, i) => [`big${i}@example.com`, `First ${i}`, "x".repeat(80)]);
    const csv = csvOf([["email", "firstName", "note"], ...rows]);
    expect(Buffer.byteLength(csv)).toBeGreaterThan(1_048_576);
    const job = await importCsv(ws, csv, audienceId);
    expect(job).toMatchObject({ status: "succeeded", rowsRead: 12_000, created: 12_000, rejected: 0 });
    const ids = await allMemberIds(ws, audienceId);
    expect(new Set(ids).size).toBe(12_000);
  });
});

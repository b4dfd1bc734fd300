// Export → import into a fresh workspace reproduces the members exactly: the CSV an export writes
// is the CSV an import reads, whatever the values hold.
import { describe, expect } from "vitest";
import type { components } from "../../generated/api.d.ts";
import { createWorkspace, type TestWorkspace, upsertMembers } from "../support/factories.ts";
import { it } from "../support/fixture.ts";

type Member = components["schemas"]["Member"];
type Import = components["schemas"]["Import"];

const TRICKY = [
  { id: "plain", email: "plain@example.com", fields: { firstName: "Ada", lastName: "Lovelace" } },
  {
    id: "quotes, commas",
    email: "q@example.com",
    alternativeEmails: ["q.other@example.com", "q.third@example.com"],
    fields: { company: 'Analytical "Engines", Ltd', role: "a,b,,c", note: "line one\nline two\r\nline three" },
  },
  {
    id: "unicode-名前",
    email: "zoe@example.com",
    fields: { firstName: "Zoë", lastName: "Ångström 日本 🎉", city: "Kraków" },
  },
  { email: "no-id@example.com", fields: { plan: "pro" } },
  { id: "bare" },
  { id: "=formula", fields: { lastName: "=1+1", company: "  spaced  " } },
  {
    id: "-minus",
    email: "-dash@example.com",
    fields: { firstName: "+plus", lastName: "-1", role: "@SUM(A1)", company: "\tx", note: "\rcr", ok: "a=b" },
  },
];

async function exportFile(ws: TestWorkspace, baseUrl: string, accept: string, query = ""): Promise<string> {
  const response = await fetch(`${baseUrl}/v0/workspaces/${ws.id}/members${query}`, {
    headers: { authorization: `Bearer ${ws.key}`, accept },
  });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain(accept);
  return response.text();
}

async function importFile(ws: TestWorkspace, baseUrl: string, csv: string): Promise<Import> {
  const response = await fetch(`${baseUrl}/v0/workspaces/${ws.id}/imports`, {
    method: "POST",
    headers: { authorization: `Bearer ${ws.key}`, "content-type": "text/csv" },
    body: csv,
  });
  expect(response.status).toBe(202);
  const { id } = (await response.json()) as Import;
  let job: Import | undefined;
  await expect
    .poll(
      async () => {
        job = await ws.api.GET("/v0/workspaces/{workspaceId}/imports/{importId}", {
          params: { path: { workspaceId: ws.id, importId: id } },
        });
        return job.status;
      },
      { timeout: 30_000, interval: 50 },
    )
    .toBe("succeeded");
  return job as Import;
}

const comparable = (members: Member[]) =>
  members
    .map(({ id, email, fields, alternativeEmails }) => ({ id, email, fields, alternativeEmails }))
    .sort((a, b) => (a.id < b.id ? -1 : 1));

const parseNdjson = (text: string): Member[] =>
  text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Member);

describe("export, then import into a fresh workspace", () => {
  it("reproduces every member: ids, e-mails, alternative e-mails and fields", async ({ server, ws }) => {
    await upsertMembers(ws, TRICKY);
    const original = parseNdjson(await exportFile(ws, server.baseUrl, "application/x-ndjson"));
    expect(original).toHaveLength(TRICKY.length);

    // The values exactly as stored: formula cells are not escaped for a spreadsheet.
    const csv = await exportFile(ws, server.baseUrl, "text/csv", "?csvEscape=none");
    const fresh = await createWorkspace(server);
    const job = await importFile(fresh, server.baseUrl, csv);
    expect(job).toMatchObject({ rowsRead: TRICKY.length, created: TRICKY.length, rejected: 0, errors: [] });

    const copy = parseNdjson(await exportFile(fresh, server.baseUrl, "application/x-ndjson"));
    expect(comparable(copy)).toEqual(comparable(original));
    // The copy's own export is the same file, byte for byte.
    expect(await exportFile(fresh, server.baseUrl, "text/csv", "?csvEscape=none")).toBe(csv);
  });

  it("a CSV export is spreadsheet-safe by default: a ' before each formula cell; NDJSON unchanged", async ({
    server,
    ws,
  }) => {
    await upsertMembers(ws, TRICKY);
    const safe = await exportFile(ws, server.baseUrl, "text/csv");
    expect(await exportFile(ws, server.baseUrl, "text/csv", "?csvEscape=formulas")).toBe(safe);
    const lines = safe.split("\n");
    expect(lines[0]).toBe("id,email,alternativeEmails,firstName,lastName,role,company,city,note,ok,plan");
    expect(lines).toContain("'=formula,,,,'=1+1,,  spaced  ,,,,");
    expect(lines).toContain(`'-minus,'-dash@example.com,,'+plus,'-1,'@SUM(A1),'\tx,,"'\rcr",a=b,`);
    // Nothing else changes (no value here holds a '): without them it is the exact file.
    expect(safe.replaceAll("'", "")).toBe(await exportFile(ws, server.baseUrl, "text/csv", "?csvEscape=none"));
    const ndjson = parseNdjson(await exportFile(ws, server.baseUrl, "application/x-ndjson", "?csvEscape=formulas"));
    expect(ndjson.find((m) => m.id === "-minus")?.fields).toMatchObject({ role: "@SUM(A1)", company: "\tx" });
  });
});

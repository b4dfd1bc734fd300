import { describe, expect } from "vitest";
import { addMembers, createAudience, upsertMembers } from "../support/factories.ts";
import { test } from "../support/fixture.ts";
import { urlOf } from "../support/live-server.ts";
import { csvRowOf, csvRows, download, jsonMembers, ndjsonMembers } from "../support/member-files.ts";

const MEMBERS = "/v0/workspaces/{workspaceId}/members";

/** Three members of the workspace, two of them in an audience; one has a custom field. Every test has them. */
const it = test.extend("seeded", { auto: true }, async ({ ws }) => {
  const audience = await createAudience(ws);
  await upsertMembers(ws, [{ id: "solo", email: "solo@example.com", fields: { plan: "pro" } }]);
  await addMembers(ws, audience, {
    members: [
      { id: "m1", email: "one@example.com", fields: { firstName: "One" } },
      { id: "m2", email: "two@example.com", fields: { firstName: "Two" } },
    ],
  });
  return { audience };
});

describe("listMembers as a file", () => {
  it("answers every member of the workspace as CSV and as NDJSON", async ({ server, ws }) => {
    const url = urlOf(MEMBERS, { workspaceId: ws.id });
    const csv = await download(server, ws, url, "text/csv");
    expect(csv.headers.get("content-disposition")).toBe('attachment; filename="members.csv"');
    const members = await jsonMembers(ws);
    expect(csvRows(csv.text)).toEqual(members.map((m) => csvRowOf(m, ["plan"])));
    expect(csvRows(csv.text).map((r) => r.id)).toEqual(["solo", "m1", "m2"]);
    const ndjson = await download(server, ws, url, "application/x-ndjson");
    expect(ndjson.headers.get("content-disposition")).toBe('attachment; filename="members.ndjson"');
    expect(ndjsonMembers(ndjson.text)).toEqual(members);
  });

  it("answers the audience's members with audienceId", async ({ server, ws, seeded }) => {
    const url = urlOf(MEMBERS, { workspaceId: ws.id }, `audienceId=${seeded.audience}&sortDirection=DESC`);
    const csv = await download(server, ws, url, "text/csv");
    expect(csv.headers.get("content-disposition")).toBe(`attachment; filename="members-${seeded.audience}.csv"`);
    expect(csv.text.split("\n")[0]).toBe("id,email,alternativeEmails,firstName,lastName,role,company");
    expect(csvRows(csv.text).map((r) => r.id)).toEqual(["m2", "m1"]);
  });
});

describe("content negotiation", () => {
  it.for([
    ["text/csv", "text/csv"],
    ["application/x-ndjson", "application/x-ndjson"],
    ["application/json;q=0.5, text/csv", "text/csv"],
    ["text/csv;q=0.2, application/x-ndjson;q=0.9", "application/x-ndjson"],
    ["text/*", "text/csv"],
    ["application/json", "application/json"],
    ["*/*", "application/json"],
    ["text/csv, application/json", "text/csv"],
    ["application/json, text/csv", "application/json"],
    ["text/csv;q=0", "application/json"],
    ["text/html", "application/json"],
  ])("Accept: %s → %s", async ([accept, type], { server, ws }) => {
    const res = await download(server, ws, urlOf(MEMBERS, { workspaceId: ws.id }), accept as string);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")?.split(";")[0]).toBe(type);
    expect(res.headers.get("vary")).toMatch(/accept/i);
  });

  it("answers the JSON page without an Accept header, its defaults unchanged", async ({ server, ws }) => {
    const res = await fetch(`${server.baseUrl}${urlOf(MEMBERS, { workspaceId: ws.id })}`, {
      headers: { authorization: `Bearer ${ws.key}` },
    });
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("vary")).toMatch(/accept/i);
    const page = (await res.json()) as { results: { id: string }[] };
    expect(page.results.map((m) => m.id)).toEqual(["m2", "m1", "solo"]);
  });
});

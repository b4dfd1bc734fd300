import { describe, expect } from "vitest";
import { addMembers, createAudience, type TestWorkspace, upsertMembers } from "../support/factories.ts";
import { test } from "../support/fixture.ts";
import { urlOf } from "../support/live-server.ts";
import { csvRowOf, csvRows, download, jsonMembers, ndjsonMembers } from "../support/member-files.ts";

const MEMBERS = "/v0/workspaces/{workspaceId}/audiences/{audienceId}/members";

/**
 * An audience of four members, added by three requests (so createdAt orders them): a bare id,
 * two with data (one whose id, fields and custom fields hold commas, quotes, line breaks and
 * non-ASCII text), and one added last; plus a member of the workspace who is not in it.
 */
const it = test.extend("seeded", async ({ ws }) => {
  const audience = await createAudience(ws);
  await addMembers(ws, audience, { memberIds: ["bare-1"] });
  await addMembers(ws, audience, {
    members: [
      {
        email: "ada@example.com",
        alternativeEmails: ["ada@work.example", "countess@example.org"],
        fields: { firstName: "Ada", lastName: "Lovelace", role: "Engineer", company: "Analytical Engines, Ltd" },
      },
      {
        id: 'odd,"id"',
        email: "zoe@example.com",
        fields: {
          firstName: "Zoë",
          lastName: 'O"Brien',
          company: "Line one\nLine two",
          role: "a,b",
          notes: "crlf\r\nand a lone cr\r; a tab\t",
          city: "Zürich 東京 🚀",
          Zeta: "upper case sorts first",
        },
      },
    ],
  });
  await upsertMembers(ws, [{ id: "outsider", email: "out@example.com", fields: { plan: "free" } }]);
  await addMembers(ws, audience, { members: [{ id: "last", fields: { city: "Paris" } }] });
  return { audience };
});

const file = (server: { baseUrl: string }, ws: TestWorkspace, audienceId: string, accept: string, query = "") =>
  download(server, ws, urlOf(MEMBERS, { workspaceId: ws.id, audienceId }, query), accept);

describe("listAudienceMembers as a file", () => {
  it("answers CSV with the import's columns, then the custom fields in byte order", async ({ server, ws, seeded }) => {
    const res = await file(server, ws, seeded.audience, "text/csv");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="members-${seeded.audience}.csv"`);
    const [header, bare] = res.text.split("\n");
    expect(header).toBe("id,email,alternativeEmails,firstName,lastName,role,company,Zeta,city,notes");
    expect(bare).toBe("bare-1,,,,,,,,,");
    // UTF-8 without a byte order mark.
    expect(res.text.charCodeAt(0)).toBe("i".charCodeAt(0));
    const rows = csvRows(res.text);
    const members = await jsonMembers(ws, seeded.audience);
    expect(rows).toEqual(members.map((m) => csvRowOf(m, ["Zeta", "city", "notes"])));
    expect(rows.map((r) => r.id)).toEqual(["bare-1", members[1]?.id, 'odd,"id"', "last"]);
    // Only the values that need it are quoted.
    expect(res.text.split("\n")[2]).toBe(
      `${members[1]?.id},ada@example.com,ada@work.example;countess@example.org,Ada,Lovelace,Engineer,"Analytical Engines, Ltd",,,`,
    );
    expect(rows[1]?.alternativeEmails).toBe("ada@work.example;countess@example.org");
    expect(rows[1]?.company).toBe("Analytical Engines, Ltd");
    expect(rows[2]).toMatchObject({
      lastName: 'O"Brien',
      role: "a,b",
      company: "Line one\nLine two",
      notes: "crlf\r\nand a lone cr\r; a tab\t",
      city: "Zürich 東京 🚀",
    });
  });

  it("answers NDJSON: each line the Member of the JSON API, byte for byte", async ({ server, ws, seeded }) => {
    const res = await file(server, ws, seeded.audience, "application/x-ndjson");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-ndjson");
    const members = await jsonMembers(ws, seeded.audience);
    expect(res.text).toBe(members.map((m) => `${JSON.stringify(m)}\n`).join(""));
    expect(ndjsonMembers(res.text)[0]).toEqual({
      id: "bare-1",
      createdAt: expect.any(String),
      email: null,
      fields: { firstName: "", lastName: "", role: "", company: "" },
      alternativeEmails: [],
    });
  });

  it("lists the newest first with sortDirection=DESC", async ({ server, ws, seeded }) => {
    const oldestFirst = ndjsonMembers((await file(server, ws, seeded.audience, "application/x-ndjson")).text);
    const res = await file(server, ws, seeded.audience, "text/csv", "sortDirection=DESC");
    expect(csvRows(res.text).map((r) => r.id)).toEqual(oldestFirst.map((m) => m.id).reverse());
  });

  it("holds only the members matching search, and only their custom fields", async ({ server, ws, seeded }) => {
    const csv = await file(server, ws, seeded.audience, "text/csv", "search=LOVELACE");
    expect(csv.text.split("\n")[0]).toBe("id,email,alternativeEmails,firstName,lastName,role,company");
    expect(csvRows(csv.text).map((r) => r.email)).toEqual(["ada@example.com"]);
    const ndjson = await file(server, ws, seeded.audience, "application/x-ndjson", "search=zo%C3%AB");
    expect(ndjsonMembers(ndjson.text).map((m) => m.id)).toEqual(['odd,"id"']);
  });

  it("exports an archived audience", async ({ server, ws, seeded }) => {
    await ws.api.DELETE("/v0/workspaces/{workspaceId}/audiences/{audienceId}", {
      params: { path: { workspaceId: ws.id, audienceId: seeded.audience } },
    });
    const res = await file(server, ws, seeded.audience, "text/csv");
    expect(res.status).toBe(200);
    expect(csvRows(res.text)).toHaveLength(4);
  });

  it("answers an empty audience with the header only, or an empty NDJSON file", async ({ server, ws }) => {
    const audience = await createAudience(ws);
    const csv = await file(server, ws, audience, "text/csv");
    expect(csv.text).toBe("id,email,alternativeEmails,firstName,lastName,role,company\n");
    const ndjson = await file(server, ws, audience, "application/x-ndjson");
    expect([ndjson.status, ndjson.text]).toEqual([200, ""]);
  });
});

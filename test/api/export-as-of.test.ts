// Exports of an audience's members at an earlier instant: the same members as the page
// asOf the same instant, as CSV and NDJSON, with the page's horizon and refusals, on both stores.
import { describe, expect } from "vitest";
import {
  addMembers,
  createAudience,
  instantBetweenWrites,
  type TestWorkspace,
  upsertMembers,
} from "../support/factories.ts";
import { it } from "../support/fixture.ts";
import { urlOf } from "../support/live-server.ts";
import { csvRows, download, ndjsonMembers } from "../support/member-files.ts";

const MEMBERS = "/v0/workspaces/{workspaceId}/audiences/{audienceId}/members";
const DAY_MS = 86_400_000;

const file = (server: { baseUrl: string }, ws: TestWorkspace, audienceId: string, accept: string, query: string) =>
  download(server, ws, urlOf(MEMBERS, { workspaceId: ws.id, audienceId }, query), accept);

const pageAsOf = (ws: TestWorkspace, audienceId: string, asOf: string, sortDirection: "ASC" | "DESC") =>
  ws.api.GET(MEMBERS, { params: { path: { workspaceId: ws.id, audienceId }, query: { asOf, sortDirection } } });

/** m1 (with data) and m2 in, then m1 out and m3 in, then m2 deleted: the instants between. */
async function story(ws: TestWorkspace) {
  const audienceId = await createAudience(ws);
  const t0 = await instantBetweenWrites();
  await upsertMembers(ws, [{ id: "m1", email: "m1@example.com", fields: { firstName: "Ada", plan: "=pro" } }]);
  await addMembers(ws, audienceId, { memberIds: ["m1", "m2"] });
  const t1 = await instantBetweenWrites();
  await ws.api.DELETE(MEMBERS, { params: { path: { workspaceId: ws.id, audienceId } }, body: { memberIds: ["m1"] } });
  await addMembers(ws, audienceId, { memberIds: ["m3"] });
  const t2 = await instantBetweenWrites();
  await ws.api.DELETE("/v0/workspaces/{workspaceId}/members", {
    params: { path: { workspaceId: ws.id } },
    body: { memberIds: ["m2"] },
  });
  return { audienceId, t0, t1, t2 };
}

const query = (asOf: string, more = "") => `asOf=${encodeURIComponent(asOf)}${more}`;

describe("listAudienceMembers as a file asOf an instant", () => {
  it("lists the audience's members at each instant, as CSV", async ({ server, ws }) => {
    const { audienceId, t0, t1, t2 } = await story(ws);
    const empty = await file(server, ws, audienceId, "text/csv", query(t0));
    expect([empty.status, empty.text]).toEqual([200, "id,email,alternativeEmails,firstName,lastName,role,company\n"]);
    // Members show their data as it is now; the custom fields are those of the file's members.
    const before = await file(server, ws, audienceId, "text/csv", query(t1, "&csvEscape=none"));
    expect(before.text.split("\n")[0]).toBe("id,email,alternativeEmails,firstName,lastName,role,company,plan");
    expect(csvRows(before.text).map((row) => [row.id, row.email, row.firstName, row.plan])).toEqual([
      ["m1", "m1@example.com", "Ada", "=pro"],
      ["m2", "", "", ""],
    ]);
    // Formula cells are escaped by default, as in any CSV export.
    const escaped = await file(server, ws, audienceId, "text/csv", query(t1));
    expect(csvRows(escaped.text)[0]?.plan).toBe("'=pro");
    // m2, deleted since, is its id alone; newest first with sortDirection=DESC.
    const after = await file(server, ws, audienceId, "text/csv", query(t2, "&sortDirection=DESC"));
    expect(after.text).toBe("id,email,alternativeEmails,firstName,lastName,role,company\nm3,,,,,,\nm2,,,,,,\n");
    // Now (or later): the members now.
    const now = await file(server, ws, audienceId, "text/csv", query(new Date(Date.now() + DAY_MS).toISOString()));
    expect(csvRows(now.text).map((row) => row.id)).toEqual(["m3"]);
  });

  it("answers NDJSON with the page's members, a deleted one with deletedAt", async ({ server, ws }) => {
    const { audienceId, t1, t2 } = await story(ws);
    for (const asOf of [t1, t2]) {
      for (const direction of ["ASC", "DESC"] as const) {
        const res = await file(
          server,
          ws,
          audienceId,
          "application/x-ndjson",
          query(asOf, `&sortDirection=${direction}`),
        );
        expect(res.status).toBe(200);
        expect(ndjsonMembers(res.text)).toEqual((await pageAsOf(ws, audienceId, asOf, direction)).results);
      }
    }
    const [deleted] = ndjsonMembers((await file(server, ws, audienceId, "application/x-ndjson", query(t2))).text);
    expect([deleted?.id, deleted?.email, typeof deleted?.deletedAt]).toEqual(["m2", null, "string"]);
  });

  it("refuses what the page refuses, before any byte of the file", async ({ server, ws }) => {
    const audienceId = await createAudience(ws);
    for (const accept of ["text/csv", "application/x-ndjson"]) {
      for (const asOf of [new Date(Date.now() - 401 * DAY_MS).toISOString(), "2020-01-01T00:00:00.000Z"]) {
        const old = await file(server, ws, audienceId, accept, query(asOf));
        expect([old.status, old.problem?.code]).toEqual([400, "history_unavailable"]);
        const oldest = Date.parse(old.problem?.oldestAvailable as string);
        expect(oldest).toBeGreaterThan(Date.parse(asOf));
        expect(oldest).toBeLessThanOrEqual(Date.now());
      }
      const asOf = new Date().toISOString();
      const unknown = await file(server, ws, "aud_unknown", accept, query(asOf));
      expect([unknown.status, unknown.problem?.code]).toEqual([404, "audience_not_found"]);
      const search = await file(server, ws, audienceId, accept, query(asOf, "&search=ada"));
      expect([search.status, search.problem?.code]).toEqual([400, "invalid_request"]);
      const paged = await file(server, ws, audienceId, accept, query(asOf, "&limit=10"));
      expect([paged.status, paged.problem?.code]).toEqual([400, "invalid_request"]);
      const malformed = await file(server, ws, audienceId, accept, "asOf=yesterday");
      expect(malformed.status).toBe(400);
    }
  });
});

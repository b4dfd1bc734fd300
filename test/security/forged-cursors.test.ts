import { describe, expect } from "vitest";
import { createAudience, upsertMembers } from "../support/factories.ts";
import { it } from "../support/fixture.ts";
import { call } from "../support/live-server.ts";
import { cursorScope, type ForgedCursor, forgedCursors, forgedSequenceCursors } from "./hostile-values.ts";

/**
 * Forged cursors through the API, each carrying the listing's real scope and breaking one check
 * of src/domain/cursor.ts: the forgery must be refused (400 invalid_cursor, nothing else) and its
 * twin, the same body at the limit, accepted, so each case is refused by the check it names and
 * not by an earlier one. The twins also take a cursor at the year 9999 to the store.
 */
describe("forged cursors are refused by the check they name", () => {
  it("on every listing that takes a cursor", async ({ server, ws }) => {
    const audienceId = await createAudience(ws, "Forged");
    await upsertMembers(ws, [{ id: "m1", email: "m1@example.com" }]);
    const base = `/v0/workspaces/${ws.id}`;
    const path = { workspaceId: ws.id, audienceId };
    // An instant since the workspace's record began, for the listings of the membership record.
    const span = new Date().toISOString();
    const listings: [string, string, string, ForgedCursor[]][] = [
      ["listMembers", `${base}/members`, "after", forgedCursors(cursorScope("listMembers", path) as string)],
      ["listMembers", `${base}/members`, "before", forgedCursors(cursorScope("listMembers", path) as string)],
      [
        "listMembers by audience",
        `${base}/members?audienceId=${audienceId}`,
        "after",
        forgedCursors(cursorScope("listMembers", path, { audienceId }) as string),
      ],
      [
        "listAudienceMembers",
        `${base}/audiences/${audienceId}/members`,
        "before",
        forgedCursors(cursorScope("listAudienceMembers", path) as string),
      ],
      [
        "listAudiences",
        `${base}/audiences?sortDirection=ASC&limit=10`,
        "after",
        forgedCursors(cursorScope("listAudiences", path, { sortDirection: "ASC" }) as string),
      ],
      ["listEvents", `${base}/events`, "after", forgedSequenceCursors(cursorScope("listEvents", path) as string)],
      ["listEvents", `${base}/events`, "before", forgedSequenceCursors(cursorScope("listEvents", path) as string)],
      [
        "listAudienceChanges",
        `${base}/audiences/${audienceId}/changes?from=${span}&to=${span}`,
        "after",
        forgedSequenceCursors(`${audienceId}:${Date.parse(span)}:${Date.parse(span)}`),
      ],
      [
        "listAudienceMembers asOf",
        `${base}/audiences/${audienceId}/members?asOf=${span}`,
        "after",
        forgedSequenceCursors(`${audienceId}@${span}`),
      ],
    ];
    const wrong: string[] = [];
    for (const [listing, url, parameter, cases] of listings) {
      const join = url.includes("?") ? "&" : "?";
      for (const { refusedBy, cursor, twin } of cases) {
        const refused = await call(server, "GET", `${url}${join}${parameter}=${cursor}`, { token: ws.key });
        const problem = refused.problem;
        if (
          refused.status !== 400 ||
          problem?.code !== "invalid_cursor" ||
          !problem.detail?.startsWith(`${parameter} is not a cursor issued by this `)
        ) {
          wrong.push(`${listing} ${parameter}, ${refusedBy}: ${refused.status} ${refused.text}`);
        }
        const accepted = await call(server, "GET", `${url}${join}${parameter}=${twin}`, { token: ws.key });
        if (accepted.status !== 200) {
          wrong.push(`${listing} ${parameter}, at the limit of ${refusedBy}: ${accepted.status} ${accepted.text}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });
});

import { describe, expect } from "vitest";
import { settledFeed, shapes } from "../events/event-support.ts";
import { rejectionOf } from "../support/checked-client.ts";
import {
  addMembers,
  allMemberIds,
  createAudience,
  createWorkspace,
  type TestWorkspace,
  upsertMembers,
} from "../support/factories.ts";
import { it } from "../support/fixture.ts";

const AUDIENCES = "/v0/workspaces/{workspaceId}/audiences";
const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";
const ACME = { field: "fields.company", op: "eq", value: "acme" } as const;

const snapshot = (ws: TestWorkspace, audienceId: string, name: string) =>
  ws.api.POST(`${AUDIENCE}/snapshot`, { params: { path: { workspaceId: ws.id, audienceId } }, body: { name } });

/** A source with members by hand (m1, m2) and by rule (ada, both Acme), one of them excluded (bob). */
async function mixedSource(ws: TestWorkspace): Promise<string> {
  const source = await createAudience(ws);
  await upsertMembers(ws, [
    { id: "ada", fields: { company: "Acme" } },
    { id: "bob", fields: { company: "Acme" } },
    { id: "cy", fields: { company: "Beta" } },
  ]);
  const path = { workspaceId: ws.id, audienceId: source };
  await ws.api.PUT(`${AUDIENCE}/filter`, { params: { path }, body: { filter: ACME } });
  await addMembers(ws, source, { memberIds: ["m1", "m2"] });
  await ws.api.DELETE(`${AUDIENCE}/members`, { params: { path }, body: { memberIds: ["bob"] } });
  return source;
}

describe("snapshotAudience", () => {
  it("creates an audience holding exactly the source's members, by hand and by rule, with no rule", async ({
    ws,
    api,
    workspaceId,
  }) => {
    const source = await mixedSource(ws);
    const response = await api.raw.POST(`${AUDIENCE}/snapshot`, {
      params: { path: { workspaceId, audienceId: source } },
      body: { name: "  Customers on 2026-11-26 " },
    });
    expect(response.response.status).toBe(201);
    expect(Object.keys(response.data ?? {})).toEqual(["id"]);
    const copy = response.data?.id ?? "";
    expect(copy).not.toBe(source);
    const path = { workspaceId, audienceId: copy };
    expect(await api.GET(AUDIENCE, { params: { path } })).toEqual({ id: copy, name: "Customers on 2026-11-26" });
    expect((await allMemberIds(ws, copy)).sort()).toEqual(["ada", "m1", "m2"]);
    expect(await api.GET(`${AUDIENCE}/filter`, { params: { path } })).toEqual({ filter: null, memberCount: 3 });
    expect((await api.GET(`${AUDIENCE}/members`, { params: { path } })).totalCount).toBe(3);
    const sourcePath = { workspaceId, audienceId: source };
    expect((await allMemberIds(ws, source)).sort()).toEqual(["ada", "m1", "m2"]);
    expect(await api.GET(`${AUDIENCE}/filter`, { params: { path: sourcePath } })).toEqual({
      filter: ACME,
      memberCount: 3,
    });
  });

  it("does not follow later member changes or rule changes of the source", async ({ ws, api, workspaceId }) => {
    const source = await mixedSource(ws);
    const copy = (await snapshot(ws, source, "Frozen")).id;
    const sourcePath = { workspaceId, audienceId: source };
    await upsertMembers(ws, [
      { id: "dee", fields: { company: "Acme" } },
      { id: "ada", fields: { company: "Beta" } },
    ]);
    await addMembers(ws, source, { memberIds: ["m3"] });
    await api.DELETE(`${AUDIENCE}/members`, { params: { path: sourcePath }, body: { memberIds: ["m1"] } });
    await api.PUT(`${AUDIENCE}/filter`, {
      params: { path: sourcePath },
      body: { filter: { field: "fields.company", op: "eq", value: "beta" } },
    });
    expect((await allMemberIds(ws, source)).sort()).toEqual(["ada", "cy", "m2", "m3"]);
    expect((await allMemberIds(ws, copy)).sort()).toEqual(["ada", "m1", "m2"]);
    // Its members are its own, added by hand: removing one from it leaves the source as it is.
    await api.DELETE(`${AUDIENCE}/members`, {
      params: { path: { workspaceId, audienceId: copy } },
      body: { memberIds: ["m2"] },
    });
    expect((await allMemberIds(ws, copy)).sort()).toEqual(["ada", "m1"]);
    expect((await allMemberIds(ws, source)).sort()).toEqual(["ada", "cy", "m2", "m3"]);
    // Added by hand, they stay whatever rule it is given later (ada, now Beta, does not match it);
    // the source's removal of bob is not copied: the new rule brings bob in.
    const rule = await api.PUT(`${AUDIENCE}/filter`, {
      params: { path: { workspaceId, audienceId: copy } },
      body: { filter: ACME },
    });
    expect(rule.memberCount).toBe(4);
    expect((await allMemberIds(ws, copy)).sort()).toEqual(["ada", "bob", "dee", "m1"]);
  });

  it("of an empty audience: an empty audience", async ({ ws, api, workspaceId }) => {
    const copy = (await snapshot(ws, await createAudience(ws), "Nobody")).id;
    const path = { workspaceId, audienceId: copy };
    expect(await api.GET(`${AUDIENCE}/filter`, { params: { path } })).toEqual({ filter: null, memberCount: 0 });
  });

  it("records audience.created, then audience.members_changed with reason snapshot and who entered", async ({
    ws,
    api,
    workspaceId,
  }) => {
    const source = await createAudience(ws, "Source");
    await addMembers(ws, source, { memberIds: ["m1", "m2"] });
    await settledFeed(api, workspaceId, 3);
    const copy = (await snapshot(ws, source, "Copy")).id;
    const events = (await settledFeed(api, workspaceId, 5)).slice(3);
    expect(shapes(events)).toEqual([
      { type: "audience.created", data: { audienceId: copy, name: "Copy" } },
      {
        type: "audience.members_changed",
        data: { audienceId: copy, entered: ["m1", "m2"], left: [], reason: "snapshot" },
      },
    ]);
  });

  it("answers 404 for an unknown or foreign source, and creates nothing", async ({ ws, server, api, workspaceId }) => {
    const foreign = await createAudience(await createWorkspace(server));
    for (const missing of ["aud_missing", foreign]) {
      const error = await rejectionOf(snapshot(ws, missing, "Never"));
      expect(error.status).toBe(404);
      expect(error.code).toBe("audience_not_found");
    }
    const list = await api.GET(AUDIENCES, { params: { path: { workspaceId }, query: { search: "never" } } });
    expect(list.results).toEqual([]);
  });

  it("answers 409 audience_archived for an archived source, and creates nothing", async ({ ws, api, workspaceId }) => {
    const source = await createAudience(ws);
    await api.DELETE(AUDIENCE, { params: { path: { workspaceId, audienceId: source } } });
    const error = await rejectionOf(snapshot(ws, source, "From archived"));
    expect(error.status).toBe(409);
    expect(error.code).toBe("audience_archived");
    const list = await api.GET(AUDIENCES, { params: { path: { workspaceId }, query: { search: "from archived" } } });
    expect(list.results).toEqual([]);
  });

  it("answers 409 audience_name_taken for a name an unarchived audience has; an archived one's is free", async ({
    ws,
    api,
    workspaceId,
  }) => {
    const source = await createAudience(ws, "Taken name");
    const error = await rejectionOf(snapshot(ws, source, " taken NAME"));
    expect(error.status).toBe(409);
    expect(error.code).toBe("audience_name_taken");
    const old = await createAudience(ws, "Old name");
    await api.DELETE(AUDIENCE, { params: { path: { workspaceId, audienceId: old } } });
    expect((await snapshot(ws, source, "Old name")).id).not.toBe(old);
  });

  it.for([
    ["only white space", "   "],
    ["control characters", "Tab\there"],
  ] as const)("answers 400 invalid_request for a name of %s", async ([_case, name], { ws }) => {
    const error = await rejectionOf(snapshot(ws, await createAudience(ws), name));
    expect(error.status).toBe(400);
    expect(error.code).toBe("invalid_request");
    expect(error.problem?.errors?.[0]?.pointer).toBe("/body/name");
  });
});

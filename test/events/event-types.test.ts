// Every write produces exactly the events that describe it, in order, and a refused request none.
import { describe, expect } from "vitest";
import { rejectionOf } from "../support/checked-client.ts";
import { addMembers, createAudience } from "../support/factories.ts";
import { it } from "../support/fixture.ts";
import { readFeed, settledFeed, shapes } from "./event-support.ts";

const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";
const FILTER = "/v0/workspaces/{workspaceId}/audiences/{audienceId}/filter";
const MEMBERS = "/v0/workspaces/{workspaceId}/members";
const ACME = { field: "fields.company", op: "eq", value: "acme" } as const;

describe("the event feed records", () => {
  it("an audience's life: created, renamed, archived once, restored", async ({ api, workspaceId, ws }) => {
    const audienceId = await createAudience(ws, "Readers");
    const path = { workspaceId, audienceId };
    await api.PATCH(AUDIENCE, { params: { path }, body: { name: "Weekly readers" } });
    await api.PATCH(AUDIENCE, { params: { path }, body: { name: "Weekly readers" } });
    await api.DELETE(AUDIENCE, { params: { path } });
    await api.DELETE(AUDIENCE, { params: { path } });
    await api.POST(`${AUDIENCE}/restore`, { params: { path } });

    expect(shapes(await settledFeed(api, workspaceId, 4))).toEqual([
      { type: "audience.created", data: { audienceId, name: "Readers" } },
      { type: "audience.renamed", data: { audienceId, name: "Weekly readers", previousName: "Readers" } },
      { type: "audience.archived", data: { audienceId } },
      { type: "audience.restored", data: { audienceId } },
    ]);
  });

  it("adding members: who was created, what changed of the others, and who entered", async ({
    api,
    workspaceId,
    ws,
  }) => {
    await api.POST(MEMBERS, {
      params: { path: { workspaceId } },
      body: { members: [{ id: "ada", email: "ada@example.com", fields: { company: "Beta" } }] },
    });
    const audienceId = await createAudience(ws);
    await addMembers(ws, audienceId, {
      memberIds: ["bob"],
      members: [{ id: "ada", fields: { company: "Acme", role: "CTO" } }],
    });

    const events = await settledFeed(api, workspaceId, 5);
    expect(shapes(events.slice(2))).toEqual([
      { type: "members.created", data: { memberIds: ["bob"] } },
      { type: "members.updated", data: { members: [{ id: "ada", changed: ["fields.company", "fields.role"] }] } },
      { type: "audience.members_changed", data: { audienceId, entered: ["ada", "bob"], left: [], reason: "manual" } },
    ]);
    expect(events.map((event) => event.sequence)).toEqual([1, 2, 3, 4, 5]);
  });

  it("a rule: the filter, then who entered and left by it; member changes move members in and out", async ({
    api,
    workspaceId,
    ws,
  }) => {
    await api.POST(MEMBERS, {
      params: { path: { workspaceId } },
      body: {
        members: [
          { id: "ada", fields: { company: "Acme" } },
          { id: "bob", fields: { company: "Beta" } },
        ],
      },
    });
    const audienceId = await createAudience(ws);
    await api.PUT(FILTER, { params: { path: { workspaceId, audienceId } }, body: { filter: ACME } });
    await api.PATCH(`${MEMBERS}/{memberId}`, {
      params: { path: { workspaceId, memberId: "bob" } },
      body: { fields: { company: "ACME" } },
    });
    await api.PATCH(`${MEMBERS}/{memberId}`, {
      params: { path: { workspaceId, memberId: "ada" } },
      body: { fields: { company: null } },
    });

    expect(shapes((await settledFeed(api, workspaceId, 8)).slice(2))).toEqual([
      { type: "audience.filter_changed", data: { audienceId, filter: ACME } },
      { type: "audience.members_changed", data: { audienceId, entered: ["ada"], left: [], reason: "rule" } },
      { type: "members.updated", data: { members: [{ id: "bob", changed: ["fields.company"] }] } },
      { type: "audience.members_changed", data: { audienceId, entered: ["bob"], left: [], reason: "member_changed" } },
      { type: "members.updated", data: { members: [{ id: "ada", changed: ["fields.company"] }] } },
      { type: "audience.members_changed", data: { audienceId, entered: [], left: ["ada"], reason: "member_changed" } },
    ]);
  });

  it("removing by hand, merging, and deleting members", async ({ api, workspaceId, ws }) => {
    const [first, second] = [await createAudience(ws, "First"), await createAudience(ws, "Second")];
    await addMembers(ws, first, { memberIds: ["a", "b"] });
    await addMembers(ws, second, { memberIds: ["c"] });
    await api.DELETE(`${AUDIENCE}/members`, {
      params: { path: { workspaceId, audienceId: first } },
      body: { memberIds: ["b"] },
    });
    const merged = await api.POST("/v0/workspaces/{workspaceId}/audiences/merge", {
      params: { path: { workspaceId } },
      body: { name: "Both", audienceIds: [first, second] },
    });
    await api.DELETE(MEMBERS, { params: { path: { workspaceId } }, body: { memberIds: ["a", "nobody"] } });

    const events = shapes((await settledFeed(api, workspaceId, 13)).slice(6));
    expect(events).toEqual([
      { type: "audience.members_changed", data: { audienceId: first, entered: [], left: ["b"], reason: "manual" } },
      { type: "audience.created", data: { audienceId: merged.id, name: "Both" } },
      { type: "audience.merged", data: { audienceId: merged.id, sourceAudienceIds: [first, second] } },
      {
        type: "audience.members_changed",
        data: { audienceId: merged.id, entered: ["a", "c"], left: [], reason: "merge" },
      },
      // The deleted member leaves each audience that held it, then the workspace.
      ...[first, merged.id].sort().map((audienceId) => ({
        type: "audience.members_changed",
        data: { audienceId, entered: [], left: ["a"], reason: "member_deleted" },
      })),
      { type: "members.deleted", data: { memberIds: ["a"] } },
    ]);
  });

  it("nothing for a refused request", async ({ api, workspaceId, ws }) => {
    const audienceId = await createAudience(ws, "Taken");
    const archived = await createAudience(ws, "Archived");
    await api.DELETE(AUDIENCE, { params: { path: { workspaceId, audienceId: archived } } });
    const before = (await settledFeed(api, workspaceId, 3)).length;

    // Each sent only when awaited, one after the other.
    const refused = [
      () =>
        api.POST("/v0/workspaces/{workspaceId}/audiences", {
          params: { path: { workspaceId } },
          body: { name: "taken" },
        }),
      () =>
        api.POST(`${AUDIENCE}/members`, {
          params: { path: { workspaceId, audienceId: archived } },
          body: { memberIds: ["x"] },
        }),
      () =>
        api.PUT(FILTER, {
          params: { path: { workspaceId, audienceId } },
          body: { filter: { field: "fields.company", op: "before", value: "acme" } as never },
        }),
      () =>
        api.POST(MEMBERS, {
          params: { path: { workspaceId } },
          body: {
            members: [
              { id: "new", email: "n@example.com" },
              { id: "other", email: "N@example.com" },
            ],
          },
        }),
      () =>
        api.PATCH(`${MEMBERS}/{memberId}`, {
          params: { path: { workspaceId, memberId: "nobody" } },
          body: { fields: {} },
        }),
    ];
    const statuses = [];
    for (const request of refused) statuses.push((await rejectionOf(request())).status);
    expect(statuses).toEqual([409, 409, 400, 409, 404]);

    // A write after them: had the refused ones recorded anything, it would come before this.
    await api.DELETE(AUDIENCE, { params: { path: { workspaceId, audienceId } } });
    const after = await settledFeed(api, workspaceId, before + 1);
    expect(shapes(after.slice(before))).toEqual([{ type: "audience.archived", data: { audienceId } }]);
    expect(await readFeed(api, workspaceId)).toHaveLength(before + 1);
  });
});

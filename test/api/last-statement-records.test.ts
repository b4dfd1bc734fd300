// A member's PATCH, and an add or a remove by hand of an audience no rule follows, record their
// events, membership record and size history in the statement that moves the audiences, which
// commits them (issue 47: two round trips): what they record must be what a write that records
// them in a statement of its own records. An audience whose rule now matches but which holds the
// member out by hand does not change, and tells nothing; an audience naming a moved one follows as
// `dependency`, after the others. On the embedded store, and on PostgreSQL when TEST_DATABASE_URL
// is set.

import { describe, expect } from "vitest";
import type { Filter } from "../../src/features/membership/rules/filter.ts";
import { membershipChanges, settledFeed, shapes } from "../events/event-support.ts";
import { allMemberIds, createAudience, type TestWorkspace, upsertMembers } from "../support/factories.ts";
import { it } from "../support/fixture.ts";

const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";
const acmeRule: Filter = { field: "fields.company", op: "eq", value: "Acme" };

const setFilter = (ws: TestWorkspace, audienceId: string, filter: Filter) =>
  ws.api.PUT(`${AUDIENCE}/filter`, { params: { path: { workspaceId: ws.id, audienceId } }, body: { filter } });
const patch = (ws: TestWorkspace, memberId: string, fields: Record<string, string | null>) =>
  ws.api.PATCH("/v0/workspaces/{workspaceId}/members/{memberId}", {
    params: { path: { workspaceId: ws.id, memberId } },
    body: { fields },
  });
/** The member's audiences at an instant, from the membership record. */
const audiencesAt = async (ws: TestWorkspace, memberId: string, asOf: string) => {
  const list = await ws.api.GET("/v0/workspaces/{workspaceId}/members/{memberId}/audiences", {
    params: { path: { workspaceId: ws.id, memberId }, query: { asOf } },
  });
  return list.results.map((a) => a.id).sort();
};
/** The audience's hourly size history: (size, entered, left) per bucket. */
const history = async (ws: TestWorkspace, audienceId: string) => {
  const rows = await ws.api.GET(`${AUDIENCE}/history`, {
    params: { path: { workspaceId: ws.id, audienceId }, query: { interval: "hour" } },
  });
  return rows.results.map(({ memberCount, entered, left }) => ({ memberCount, entered, left }));
};

describe("a write whose last statement records it", () => {
  it("records what it moved, in order, as a write of its own record would", async ({ ws }) => {
    const acme = await createAudience(ws, "Acme");
    const held = await createAudience(ws, "Acme, but not Ada");
    const named = await createAudience(ws, "In Acme");
    const other = await createAudience(ws, "Initech");
    await setFilter(ws, acme, acmeRule);
    await setFilter(ws, held, acmeRule);
    await setFilter(ws, named, { field: "audience", op: "in", value: acme });
    await setFilter(ws, other, { field: "fields.company", op: "eq", value: "Initech" });
    await upsertMembers(ws, [{ id: "ada", fields: { company: "Initech" } }, { id: "bob" }]);
    // Ada out of `held` by hand: its rule will match her, its members will not change.
    await ws.api.DELETE(`${AUDIENCE}/members`, {
      params: { path: { workspaceId: ws.id, audienceId: held } },
      body: { memberIds: ["ada"] },
    });
    // Four audiences created and given rules, the members created, Ada into `other`.
    const before = 10;
    expect(membershipChanges((await settledFeed(ws.api, ws.id, before)).slice(before - 1))).toEqual([
      { audienceId: other, reason: "member_changed", entered: ["ada"], left: [] },
    ]);
    const beforeAt = new Date().toISOString();

    await patch(ws, "ada", { company: "Acme" });
    const events = (await settledFeed(ws.api, ws.id, before + 4)).slice(before);
    expect(shapes(events).slice(0, 1)).toEqual([
      { type: "members.updated", data: { members: [{ id: "ada", changed: ["fields.company"] }] } },
    ]);
    expect(membershipChanges(events)).toEqual([
      ...[acme, other]
        .sort()
        .map((audienceId) =>
          audienceId === acme
            ? { audienceId, reason: "member_changed", entered: ["ada"], left: [] }
            : { audienceId, reason: "member_changed", entered: [], left: ["ada"] },
        ),
      { audienceId: named, reason: "dependency", entered: ["ada"], left: [] },
    ]);
    expect(events).toHaveLength(4);
    expect(await allMemberIds(ws, held)).toEqual([]);

    // The record: where she was before the PATCH, and after it.
    expect(await audiencesAt(ws, "ada", beforeAt)).toEqual([other]);
    expect(await audiencesAt(ws, "ada", new Date().toISOString())).toEqual([acme, named].sort());
    // Each audience's changes since then, as the record tells them (with the events' reasons).
    const changes = async (audienceId: string) => {
      const page = await ws.api.GET(`${AUDIENCE}/changes`, {
        params: { path: { workspaceId: ws.id, audienceId }, query: { from: beforeAt } },
      });
      return page.results.map(({ memberId, change, reason }) => ({ memberId, change, reason }));
    };
    expect(await changes(acme)).toEqual([{ memberId: "ada", change: "entered", reason: "member_changed" }]);
    expect(await changes(named)).toEqual([{ memberId: "ada", change: "entered", reason: "dependency" }]);
    expect(await changes(other)).toEqual([{ memberId: "ada", change: "left", reason: "member_changed" }]);
    expect(await changes(held)).toEqual([]);
    // The size history: one entered where she entered, one left where she left, nothing in `held`.
    expect((await history(ws, acme)).at(-1)).toEqual({ memberCount: 1, entered: 1, left: 0 });
    expect((await history(ws, named)).at(-1)).toEqual({ memberCount: 1, entered: 1, left: 0 });
    expect((await history(ws, other)).at(-1)).toEqual({ memberCount: 0, entered: 1, left: 1 });
    expect(await history(ws, held)).toEqual([]);

    // A change no rule reads: its members.updated event alone.
    await patch(ws, "ada", { nickname: "A" });
    const last = (await settledFeed(ws.api, ws.id, before + 5)).slice(before + 4);
    expect(shapes(last)).toEqual([
      { type: "members.updated", data: { members: [{ id: "ada", changed: ["fields.nickname"] }] } },
    ]);
  });

  it("records an add and a remove by hand, with what follows them when a rule does", async ({ ws }) => {
    const alone = await createAudience(ws, "By hand");
    const followed = await createAudience(ws, "By hand, followed");
    const follower = await createAudience(ws, "Following");
    await setFilter(ws, follower, { field: "audience", op: "in", value: followed });
    await upsertMembers(ws, [{ id: "ada" }, { id: "bob" }]);
    const from = new Date().toISOString();
    const add = (audienceId: string, memberIds: string[]) =>
      ws.api.POST(`${AUDIENCE}/members`, { params: { path: { workspaceId: ws.id, audienceId } }, body: { memberIds } });
    const remove = (audienceId: string, memberIds: string[]) =>
      ws.api.DELETE(`${AUDIENCE}/members`, {
        params: { path: { workspaceId: ws.id, audienceId } },
        body: { memberIds },
      });
    expect(await add(alone, ["ada", "bob"])).toMatchObject({ added: 2, alreadyMembers: 0, created: 0 });
    expect(await add(alone, ["ada"])).toMatchObject({ added: 0, alreadyMembers: 1 });
    expect(await remove(alone, ["bob", "cy"])).toEqual({ removed: 1, notMembers: 1 });
    expect(await add(followed, ["bob"])).toMatchObject({ added: 1 });
    expect(await remove(followed, ["bob"])).toEqual({ removed: 1, notMembers: 0 });

    // Three audiences created, one rule set, the members created, then the changes above.
    const events = (await settledFeed(ws.api, ws.id, 11)).slice(5);
    expect(membershipChanges(events)).toEqual([
      { audienceId: alone, reason: "manual", entered: ["ada", "bob"], left: [] },
      { audienceId: alone, reason: "manual", entered: [], left: ["bob"] },
      { audienceId: followed, reason: "manual", entered: ["bob"], left: [] },
      { audienceId: follower, reason: "dependency", entered: ["bob"], left: [] },
      { audienceId: followed, reason: "manual", entered: [], left: ["bob"] },
      { audienceId: follower, reason: "dependency", entered: [], left: ["bob"] },
    ]);
    const page = await ws.api.GET(`${AUDIENCE}/changes`, {
      params: { path: { workspaceId: ws.id, audienceId: alone }, query: { from } },
    });
    expect(page.results.map(({ memberId, change, reason }) => ({ memberId, change, reason }))).toEqual([
      { memberId: "ada", change: "entered", reason: "manual" },
    ]);
    expect(page.moves).toEqual({ entered: 2, left: 1 });
    expect((await history(ws, alone)).at(-1)).toEqual({ memberCount: 1, entered: 2, left: 1 });
  });

  it("records an upsert of members found by e-mail and new ones, evaluated with their new data", async ({ ws }) => {
    const acme = await createAudience(ws, "Acme");
    await setFilter(ws, acme, acmeRule);
    await upsertMembers(ws, [{ id: "ada", email: "ada@example.com", fields: { company: "Initech" } }]);
    await ws.api.POST("/v0/workspaces/{workspaceId}/members", {
      params: { path: { workspaceId: ws.id } },
      body: {
        members: [
          { email: "ADA@example.com", fields: { company: "Acme" } },
          { id: "bob", fields: { company: "Acme" } },
        ],
      },
    });
    // The audience created and given its rule, Ada created; then Bob created, Ada updated, both in.
    const events = (await settledFeed(ws.api, ws.id, 6)).slice(3);
    expect(shapes(events).map((event) => event.type)).toEqual([
      "members.created",
      "members.updated",
      "audience.members_changed",
    ]);
    expect(membershipChanges(events)).toEqual([
      { audienceId: acme, reason: "member_changed", entered: ["ada", "bob"], left: [] },
    ]);
    expect(await allMemberIds(ws, acme).then((ids) => ids.sort())).toEqual(["ada", "bob"]);
    expect((await history(ws, acme)).at(-1)).toEqual({ memberCount: 2, entered: 2, left: 0 });
    const ada = await ws.api.GET("/v0/workspaces/{workspaceId}/members/{memberId}", {
      params: { path: { workspaceId: ws.id, memberId: "ada" } },
    });
    expect(ada.fields).toMatchObject({ company: "Acme" });
  });
});

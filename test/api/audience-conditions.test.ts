import { describe, expect } from "vitest";
import type { Filter } from "../../src/features/membership/rules/filter.ts";
import { membershipChanges, readFeed } from "../events/event-support.ts";
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

const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";

const setFilter = (ws: TestWorkspace, audienceId: string, filter: Filter | null) =>
  ws.api.PUT(`${AUDIENCE}/filter`, { params: { path: { workspaceId: ws.id, audienceId } }, body: { filter } });
const remove = (ws: TestWorkspace, audienceId: string, memberIds: string[]) =>
  ws.api.DELETE(`${AUDIENCE}/members`, { params: { path: { workspaceId: ws.id, audienceId } }, body: { memberIds } });
const archive = (ws: TestWorkspace, audienceId: string) =>
  ws.api.DELETE(AUDIENCE, { params: { path: { workspaceId: ws.id, audienceId } } });
const inA = (id: string): Filter => ({ field: "audience", op: "in", value: id });
const notIn = (id: string): Filter => ({ field: "audience", op: "notIn", value: id });
const sorted = async (ws: TestWorkspace, id: string) => (await allMemberIds(ws, id)).sort();

/**
 * The workspace's audience.members_changed events after its first `skip`, readably, once there
 * are `count` of them (events are published just after their write commits, so a cursor taken
 * right after a write may come before that write's events).
 */
async function changesAfter(ws: TestWorkspace, skip: number, count: number) {
  let changes: ReturnType<typeof membershipChanges> = [];
  const read = async () => {
    changes = membershipChanges(await readFeed(ws.api, ws.id)).slice(skip);
    return changes.length;
  };
  await expect.poll(read, { timeout: 20_000 }).toBeGreaterThanOrEqual(count);
  return changes;
}

describe("audience conditions", () => {
  it("make a difference of audiences that stays exact as either changes, with dependency events", async ({ ws }) => {
    const newsletter = await createAudience(ws, "Newsletter");
    const customers = await createAudience(ws, "Customers");
    const prospects = await createAudience(ws, "Newsletter without customers");
    await addMembers(ws, newsletter, { memberIds: ["ada", "bob", "cy"] });
    await addMembers(ws, customers, { memberIds: ["bob"] });
    const set = await setFilter(ws, prospects, { all: [inA(newsletter), notIn(customers)] });
    expect(set.memberCount).toBe(2);
    expect(await sorted(ws, prospects)).toEqual(["ada", "cy"]);

    // Newsletter's and Customers' additions and Prospects' rule came first: three changes.
    await addMembers(ws, customers, { memberIds: ["ada"] });
    await remove(ws, newsletter, ["cy"]);
    await remove(ws, customers, ["bob"]);
    await addMembers(ws, newsletter, { memberIds: ["dee"] });
    expect(await sorted(ws, prospects)).toEqual(["bob", "dee"]);
    expect(await changesAfter(ws, 3, 8)).toEqual([
      { audienceId: customers, reason: "manual", entered: ["ada"], left: [] },
      { audienceId: prospects, reason: "dependency", entered: [], left: ["ada"] },
      { audienceId: newsletter, reason: "manual", entered: [], left: ["cy"] },
      { audienceId: prospects, reason: "dependency", entered: [], left: ["cy"] },
      { audienceId: customers, reason: "manual", entered: [], left: ["bob"] },
      { audienceId: prospects, reason: "dependency", entered: ["bob"], left: [] },
      { audienceId: newsletter, reason: "manual", entered: ["dee"], left: [] },
      { audienceId: prospects, reason: "dependency", entered: ["dee"], left: [] },
    ]);
  });

  it("follow transitively, in dependency order, whatever moved the first audience", async ({ ws }) => {
    const acme = await createAudience(ws, "Acme");
    const middle = await createAudience(ws, "Middle");
    const top = await createAudience(ws, "Top");
    await setFilter(ws, acme, { field: "fields.company", op: "eq", value: "Acme" });
    await setFilter(ws, middle, inA(acme));
    await setFilter(ws, top, { any: [inA(middle), { field: "id", op: "eq", value: "zed" }] });
    // The rules, set before there were members, moved nobody.
    // A member's data moves it into the first audience: the others follow in the same write.
    await upsertMembers(ws, [{ id: "ada", fields: { company: "Acme" } }]);
    expect(await sorted(ws, top)).toEqual(["ada"]);
    // A rule change of the first audience moves its members out of all three.
    await setFilter(ws, acme, { field: "fields.company", op: "eq", value: "Initech" });
    expect(await sorted(ws, middle)).toEqual([]);
    expect(await sorted(ws, top)).toEqual([]);
    // Removing by hand from the middle one: the top one follows, the first one does not.
    await setFilter(ws, acme, null);
    await addMembers(ws, middle, { memberIds: ["bob"] });
    await remove(ws, middle, ["bob"]);
    expect(await changesAfter(ws, 0, 10)).toEqual([
      { audienceId: acme, reason: "member_changed", entered: ["ada"], left: [] },
      ...[middle, top].sort().map((audienceId) => ({ audienceId, reason: "dependency", entered: ["ada"], left: [] })),
      { audienceId: acme, reason: "rule", entered: [], left: ["ada"] },
      { audienceId: middle, reason: "dependency", entered: [], left: ["ada"] },
      { audienceId: top, reason: "dependency", entered: [], left: ["ada"] },
      { audienceId: middle, reason: "manual", entered: ["bob"], left: [] },
      { audienceId: top, reason: "dependency", entered: ["bob"], left: [] },
      { audienceId: middle, reason: "manual", entered: [], left: ["bob"] },
      { audienceId: top, reason: "dependency", entered: [], left: ["bob"] },
    ]);
  });

  it("count what the named audience holds by hand, and members deleted leave them all", async ({ ws }) => {
    const a = await createAudience(ws);
    const b = await createAudience(ws);
    await setFilter(ws, a, { field: "fields.company", op: "eq", value: "Acme" });
    await upsertMembers(ws, [
      { id: "ada", fields: { company: "Acme" } },
      { id: "bob", fields: { company: "Acme" } },
    ]);
    await setFilter(ws, b, inA(a));
    await remove(ws, a, ["bob"]);
    await addMembers(ws, a, { memberIds: ["cy"] });
    expect(await sorted(ws, b)).toEqual(["ada", "cy"]);
    await ws.api.DELETE("/v0/workspaces/{workspaceId}/members", {
      params: { path: { workspaceId: ws.id } },
      body: { memberIds: ["ada"] },
    });
    expect(await sorted(ws, b)).toEqual(["cy"]);
  });

  it("refuse unknown, other workspaces', archived and self-naming audiences", async ({ ws, server }) => {
    const a = await createAudience(ws);
    const b = await createAudience(ws);
    const unknown = await rejectionOf(setFilter(ws, a, { all: [inA(b), inA("aud_nope")] }));
    expect(unknown.problem).toMatchObject({
      status: 400,
      code: "invalid_filter",
      detail: "/body/filter/all/1/value names aud_nope, no audience of this workspace",
      errors: [{ pointer: "/body/filter/all/1/value", message: "names no audience of this workspace" }],
    });
    const other = await createAudience(await createWorkspace(server));
    expect((await rejectionOf(setFilter(ws, a, inA(other)))).code).toBe("invalid_filter");
    expect((await rejectionOf(setFilter(ws, a, notIn(a)))).problem).toMatchObject({
      status: 400,
      code: "filter_cycle",
    });
    await setFilter(ws, b, inA(a));
    const customers = await createAudience(ws, "Customers");
    await setFilter(ws, customers, inA(b));
    const plain = await createAudience(ws, "Plain");
    // The detail names the audience that leads back; the errors point at its condition only.
    const cycle = await rejectionOf(setFilter(ws, a, { all: [{ not: inA(customers) }, inA(plain)] }));
    expect(cycle.problem).toMatchObject({
      code: "filter_cycle",
      detail: `The filter names audience "Customers" (${customers}), whose rule leads back to this audience.`,
      errors: [{ pointer: "/body/filter/all/0/not/value", message: "leads back to this audience" }],
    });
    expect((await rejectionOf(setFilter(ws, a, { not: inA(b) }))).code).toBe("filter_cycle");
    const c = await createAudience(ws, "Last year");
    await archive(ws, c);
    expect((await rejectionOf(setFilter(ws, a, inA(c)))).problem).toMatchObject({
      status: 409,
      code: "audience_archived",
      detail: `The filter names audience "Last year" (${c}), which is archived; restore it or name another.`,
    });
    expect(await ws.api.GET(`${AUDIENCE}/filter`, { params: { path: { workspaceId: ws.id, audienceId: a } } })).toEqual(
      { filter: null, memberCount: 0 },
    );
  });

  it("are checked by a preview as by a saved rule", async ({ ws }) => {
    const a = await createAudience(ws);
    await addMembers(ws, a, { memberIds: ["ada"] });
    const preview = (filter: Filter) =>
      ws.api.POST("/v0/workspaces/{workspaceId}/audiences/preview", {
        params: { path: { workspaceId: ws.id } },
        body: { filter, limit: 30 },
      });
    expect((await preview(inA(a))).totalCount).toBe(1);
    expect((await rejectionOf(preview({ not: inA("aud_nope") }))).problem).toMatchObject({
      status: 400,
      code: "invalid_filter",
      errors: [{ pointer: "/body/filter/not/value", message: "names no audience of this workspace" }],
    });
    await archive(ws, a);
    expect((await rejectionOf(preview(inA(a)))).problem).toMatchObject({ status: 409, code: "audience_archived" });
  });

  it("are read by previews, node counts and dry runs as the named audience's members", async ({ ws }) => {
    await upsertMembers(ws, [
      { id: "ada", fields: { plan: "pro" } },
      { id: "bob", fields: { plan: "pro" } },
      { id: "cy", fields: { plan: "pro" } },
      { id: "dee", fields: { plan: "free" } },
    ]);
    // Pro = its rule's ada, bob and cy, without bob removed by hand, with dee added by hand.
    const pro = await createAudience(ws, "Pro");
    await setFilter(ws, pro, { field: "fields.plan", op: "eq", value: "pro" });
    await remove(ws, pro, ["bob"]);
    await addMembers(ws, pro, { memberIds: ["dee"] });
    const empty = await createAudience(ws, "Empty");
    const preview = (filter: Filter, nodeCounts = false) =>
      ws.api.POST("/v0/workspaces/{workspaceId}/audiences/preview", {
        params: { path: { workspaceId: ws.id } },
        body: { filter, limit: 30, nodeCounts },
      });
    const members = async (filter: Filter) => {
      const answer = await preview(filter);
      return { count: answer.totalCount, ids: answer.results.map((m) => m.id).sort() };
    };
    expect(await members(inA(pro))).toEqual({ count: 3, ids: ["ada", "cy", "dee"] });
    expect(await members(notIn(pro))).toEqual({ count: 1, ids: ["bob"] });
    expect(await members(inA(empty))).toEqual({ count: 0, ids: [] });
    expect(await members(notIn(empty))).toEqual({ count: 4, ids: ["ada", "bob", "cy", "dee"] });

    const outside: Filter = { all: [notIn(pro), notIn(empty)] };
    const counted = await preview({ any: [inA(empty), outside] }, true);
    expect(counted.nodes).toEqual([
      { pointer: "", count: 1 },
      { pointer: "/any/0", count: 0 },
      { pointer: "/any/1", count: 1 },
      { pointer: "/any/1/all/0", count: 1 },
      { pointer: "/any/1/all/1", count: 4 },
    ]);
    const target = await createAudience(ws, "Outside Pro");
    const dryRun = await ws.api.POST(`${AUDIENCE}/filter/preview`, {
      params: { path: { workspaceId: ws.id, audienceId: target } },
      body: { filter: outside },
    });
    expect(dryRun).toEqual({
      memberCount: 1,
      entering: { count: 1, sample: ["bob"] },
      leaving: { count: 0, sample: [] },
    });

    await archive(ws, empty);
    expect((await rejectionOf(preview(notIn(empty)))).problem).toMatchObject({
      status: 409,
      code: "audience_archived",
    });
  });

  it("refuse a chain of more than 10 audiences, and accept one of 10", async ({ ws }) => {
    const ids: string[] = [];
    for (let i = 0; i < 11; i++) ids.push(await createAudience(ws));
    for (let i = 1; i < 10; i++) await setFilter(ws, ids[i] as string, inA(ids[i - 1] as string));
    const tooLong = await rejectionOf(setFilter(ws, ids[10] as string, inA(ids[9] as string)));
    expect(tooLong.problem).toMatchObject({ status: 400, code: "invalid_filter" });
    // Lengthening the chain from below counts the audiences above too.
    const below = await createAudience(ws);
    expect((await rejectionOf(setFilter(ws, ids[0] as string, inA(below)))).code).toBe("invalid_filter");
  });

  it("keep a named audience from being archived while an unarchived rule names it", async ({ ws }) => {
    const a = await createAudience(ws);
    const b = await createAudience(ws, "Buyers");
    const c = await createAudience(ws, "Not buyers");
    await setFilter(ws, b, inA(a));
    await setFilter(ws, c, { not: inA(a) });
    const refused = await rejectionOf(archive(ws, a));
    expect(refused.problem).toMatchObject({ status: 409, code: "audience_in_use", audienceIds: [b, c].sort() });
    // Named as a person knows them, in id order.
    const names = new Map([
      [b, `"Buyers" (${b})`],
      [c, `"Not buyers" (${c})`],
    ]);
    const labels = [b, c]
      .sort()
      .map((id) => names.get(id))
      .join(", ");
    expect(refused.problem?.detail).toBe(
      `The rules of audiences ${labels} name this audience; change them or archive them first.`,
    );
    await archive(ws, b);
    await setFilter(ws, c, null);
    await archive(ws, a);
  });
});

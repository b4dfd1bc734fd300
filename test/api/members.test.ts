import { describe, expect } from "vitest";
import { rejectionOf } from "../support/checked-client.ts";
import {
  addMembers,
  createAudience,
  createWorkspace,
  type TestWorkspace,
  upsertMembers,
} from "../support/factories.ts";
import { it } from "../support/fixture.ts";

const MEMBERS = "/v0/workspaces/{workspaceId}/members";
const MEMBER = "/v0/workspaces/{workspaceId}/members/{memberId}";
const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";

const getMember = (ws: TestWorkspace, memberId: string) =>
  ws.api.GET(MEMBER, { params: { path: { workspaceId: ws.id, memberId } } });

describe("upsertMembers", () => {
  it("reports created, merged or unchanged for each input, in order", async ({ ws }) => {
    const first = await upsertMembers(ws, [{ id: "u1", email: "u1@example.com" }, { email: "u2@example.com" }]);
    expect(first.results[0]).toEqual({ id: "u1", status: "created" });
    expect(first.results[1]).toMatchObject({ status: "created" });
    const second = await upsertMembers(ws, [
      { email: "U1@example.com", fields: { role: "Admin" } },
      { id: "u1", fields: { role: "Admin" } },
    ]);
    expect(second.results).toEqual([
      { id: "u1", status: "merged" },
      { id: "u1", status: "unchanged" },
    ]);
  });

  it("answers 409 for an input matching two members and writes nothing", async ({ ws }) => {
    await upsertMembers(ws, [
      { id: "x1", email: "x1@example.com" },
      { id: "x2", email: "x2@example.com" },
    ]);
    const error = await rejectionOf(upsertMembers(ws, [{ id: "x3" }, { id: "x1", email: "x2@example.com" }]));
    expect(error.status).toBe(409);
    expect(error.code).toBe("member_identity_conflict");
    expect((await rejectionOf(getMember(ws, "x3"))).status).toBe(404);
  });

  it("keeps the primary e-mail when an entry matches by an alternative one; a new address becomes primary", async ({
    ws,
  }) => {
    await upsertMembers(ws, [{ id: "alt1", email: "home@example.com", alternativeEmails: ["work@example.com"] }]);
    const byAlternative = await upsertMembers(ws, [{ email: "WORK@example.com", fields: { company: "Acme" } }]);
    expect(byAlternative.results).toEqual([{ id: "alt1", status: "merged" }]);
    expect(await getMember(ws, "alt1")).toMatchObject({
      email: "home@example.com",
      alternativeEmails: ["work@example.com"],
      fields: { company: "Acme" },
    });
    await upsertMembers(ws, [{ id: "alt1", email: "new@example.com" }]);
    expect(await getMember(ws, "alt1")).toMatchObject({
      email: "new@example.com",
      alternativeEmails: ["work@example.com", "home@example.com"],
    });
    // An explicit edit of the member may promote an address it already has.
    const patched = await ws.api.PATCH(MEMBER, {
      params: { path: { workspaceId: ws.id, memberId: "alt1" } },
      body: { email: "work@example.com" },
    });
    expect(patched).toMatchObject({
      email: "work@example.com",
      alternativeEmails: ["home@example.com", "new@example.com"],
    });
  });

  it("answers 400 for an empty list or more than 10,000 members", async ({ ws }) => {
    expect((await rejectionOf(upsertMembers(ws, []))).status).toBe(400);
    const many = Array.from({ length: 10_001 }, (_, i) => ({ id: `n${i}` }));
    expect((await rejectionOf(upsertMembers(ws, many))).status).toBe(400);
  });
});

describe("getMember and updateMember", () => {
  it("read a member and merge a patch into it, removing fields set to null", async ({ ws, api, workspaceId }) => {
    await upsertMembers(ws, [{ id: "p 1/é", email: "p1@example.com", fields: { firstName: "Pat", plan: "pro" } }]);
    const patched = await api.PATCH(MEMBER, {
      params: { path: { workspaceId, memberId: "p 1/é" } },
      body: { email: "pat@example.com", fields: { plan: null, lastName: "Lee" } },
    });
    expect(patched).toMatchObject({
      id: "p 1/é",
      email: "pat@example.com",
      fields: { firstName: "Pat", lastName: "Lee", role: "", company: "" },
      alternativeEmails: ["p1@example.com"],
    });
    expect(patched.fields.plan).toBeUndefined();
    expect(await getMember(ws, "p 1/é")).toEqual(patched);
  });

  it("answer 404 member_not_found for an unknown member, and 409 for another member's e-mail", async ({
    ws,
    api,
    workspaceId,
  }) => {
    const update = (memberId: string, body: { email?: string; fields?: Record<string, string> }) =>
      api.PATCH(MEMBER, { params: { path: { workspaceId, memberId } }, body });
    expect((await rejectionOf(getMember(ws, "nobody"))).code).toBe("member_not_found");
    expect((await rejectionOf(update("nobody", { fields: { a: "b" } }))).status).toBe(404);
    await upsertMembers(ws, [{ id: "own", email: "own@example.com" }, { id: "thief" }]);
    const error = await rejectionOf(update("thief", { email: "OWN@example.com" }));
    expect(error.status).toBe(409);
    expect(error.code).toBe("member_identity_conflict");
  });

  it("answer 400 for an empty patch", async ({ ws, api, workspaceId }) => {
    await upsertMembers(ws, [{ id: "empty-patch" }]);
    const empty = api.PATCH(MEMBER, { params: { path: { workspaceId, memberId: "empty-patch" } }, body: {} });
    expect((await rejectionOf(empty)).status).toBe(400);
  });
});

describe("listMembers, listMemberAudiences and deleteMembers", () => {
  it("page through the workspace's members or one audience's, and say why a member is in each", async ({ server }) => {
    const other = await createWorkspace(server);
    const { api } = other;
    const workspaceId = other.id;
    await upsertMembers(other, [{ id: "l1" }, { id: "l2" }, { id: "l3" }]);
    const first = await api.GET(MEMBERS, { params: { path: { workspaceId }, query: { limit: 2 } } });
    expect(first.totalCount).toBe(3);
    expect(first.results.map((m) => m.id)).toEqual(["l3", "l2"]);
    const after = first.pageInfo.endCursor;
    const next = await api.GET(MEMBERS, { params: { path: { workspaceId }, query: { limit: 2, after } } });
    expect(next.results.map((m) => m.id)).toEqual(["l1"]);
    expect(next.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });

    const manual = await createAudience(other, "Manual");
    const rule = await createAudience(other, "Rule");
    await addMembers(other, manual, { memberIds: ["l1"] });
    await api.PUT(`${AUDIENCE}/filter`, {
      params: { path: { workspaceId, audienceId: rule } },
      body: { filter: { field: "id", op: "in", value: ["l1", "l2"] } },
    });
    const inAudience = await api.GET(MEMBERS, { params: { path: { workspaceId }, query: { audienceId: manual } } });
    expect(inAudience.results.map((m) => m.id)).toEqual(["l1"]);
    expect(inAudience.totalCount).toBe(1);
    const audiencesOf = (memberId: string) =>
      api.GET(`${MEMBER}/audiences`, { params: { path: { workspaceId, memberId } } });
    expect((await audiencesOf("l1")).results).toEqual([
      { id: rule, name: "Rule", isArchived: false, reason: "rule" },
      { id: manual, name: "Manual", isArchived: false, reason: "manual" },
    ]);
    const manualMembers = (audienceId: string) =>
      api.GET(`${AUDIENCE}/members`, { params: { path: { workspaceId, audienceId } } });
    const foreignCursor = (await manualMembers(manual)).pageInfo.endCursor;
    const foreign = await rejectionOf(
      api.GET(MEMBERS, { params: { path: { workspaceId }, query: { after: foreignCursor } } }),
    );
    expect(foreign.code).toBe("invalid_cursor");

    const deleted = await api.DELETE(MEMBERS, {
      params: { path: { workspaceId } },
      body: { memberIds: ["l1", "ghost"] },
    });
    expect(deleted).toEqual({ deleted: 1, notFound: 1 });
    expect((await manualMembers(manual)).totalCount).toBe(0);
    const filter = await api.GET(`${AUDIENCE}/filter`, { params: { path: { workspaceId, audienceId: rule } } });
    expect(filter.memberCount).toBe(1);
    expect((await rejectionOf(audiencesOf("l1"))).status).toBe(404);
  });

  it("deleteMembers frees the deleted members' addresses for new members", async ({ ws }) => {
    await upsertMembers(ws, [{ id: "gone", email: "Gone@example.com", alternativeEmails: ["old@example.com"] }]);
    const deleted = await ws.api.DELETE(MEMBERS, {
      params: { path: { workspaceId: ws.id } },
      body: { memberIds: ["gone"] },
    });
    expect(deleted).toEqual({ deleted: 1, notFound: 0 });
    const again = await upsertMembers(ws, [{ email: "gone@example.com" }, { email: "OLD@example.com" }]);
    expect(again.results.map((r) => r.status)).toEqual(["created", "created"]);
    expect(new Set(again.results.map((r) => r.id)).size).toBe(2);
    expect(again.results.map((r) => r.id)).not.toContain("gone");
  });
});

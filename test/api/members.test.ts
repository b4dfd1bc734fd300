import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMembers, createAudience, createWorkspace, type TestWorkspace } from "../support/factories.ts";
import { type LiveServer, startLiveServer } from "../support/live-server.ts";

let server: LiveServer;
let ws: TestWorkspace;

beforeAll(async () => {
  server = await startLiveServer();
  ws = await createWorkspace(server);
});
afterAll(() => server.close());

describe("upsertMembers", () => {
  it("reports created, merged or unchanged for each input, in order", async () => {
    const first = await ws.call("POST", "/members", {
      body: { members: [{ id: "u1", email: "u1@example.com" }, { email: "u2@example.com" }] },
    });
    expect(first.status).toBe(200);
    expect(first.body.results[0]).toEqual({ id: "u1", status: "created" });
    expect(first.body.results[1]).toMatchObject({ status: "created" });
    const second = await ws.call("POST", "/members", {
      body: {
        members: [
          { email: "U1@example.com", fields: { role: "Admin" } },
          { id: "u1", fields: { role: "Admin" } },
        ],
      },
    });
    expect(second.body.results).toEqual([
      { id: "u1", status: "merged" },
      { id: "u1", status: "unchanged" },
    ]);
  });

  it("answers 409 for an input matching two members and writes nothing", async () => {
    await ws.call("POST", "/members", {
      body: {
        members: [
          { id: "x1", email: "x1@example.com" },
          { id: "x2", email: "x2@example.com" },
        ],
      },
    });
    const response = await ws.call("POST", "/members", {
      body: { members: [{ id: "x3" }, { id: "x1", email: "x2@example.com" }] },
    });
    expect(response.status).toBe(409);
    expect(response.body.code).toBe("member_identity_conflict");
    expect((await ws.call("GET", "/members/x3")).status).toBe(404);
  });

  it("keeps the primary e-mail when an entry matches by an alternative one; a new address becomes primary", async () => {
    await ws.call("POST", "/members", {
      body: { members: [{ id: "alt1", email: "home@example.com", alternativeEmails: ["work@example.com"] }] },
    });
    const byAlternative = await ws.call("POST", "/members", {
      body: { members: [{ email: "WORK@example.com", fields: { company: "Acme" } }] },
    });
    expect(byAlternative.body.results).toEqual([{ id: "alt1", status: "merged" }]);
    expect((await ws.call("GET", "/members/alt1")).body).toMatchObject({
      email: "home@example.com",
      alternativeEmails: ["work@example.com"],
      fields: { company: "Acme" },
    });
    await ws.call("POST", "/members", { body: { members: [{ id: "alt1", email: "new@example.com" }] } });
    expect((await ws.call("GET", "/members/alt1")).body).toMatchObject({
      email: "new@example.com",
      alternativeEmails: ["work@example.com", "home@example.com"],
    });
    // An explicit edit of the member may promote an address it already has.
    const patched = await ws.call("PATCH", "/members/alt1", { body: { email: "work@example.com" } });
    expect(patched.body).toMatchObject({
      email: "work@example.com",
      alternativeEmails: ["home@example.com", "new@example.com"],
    });
  });

  it("answers 400 for an empty list or more than 10,000 members", async () => {
    expect((await ws.call("POST", "/members", { body: { members: [] } })).status).toBe(400);
    const many = Array.from({ length: 10_001 }, (_, i) => ({ id: `n${i}` }));
    expect((await ws.call("POST", "/members", { body: { members: many } })).status).toBe(400);
  });
});

describe("getMember and updateMember", () => {
  it("read a member and merge a patch into it, removing fields set to null", async () => {
    await ws.call("POST", "/members", {
      body: { members: [{ id: "p 1/é", email: "p1@example.com", fields: { firstName: "Pat", plan: "pro" } }] },
    });
    const path = `/members/${encodeURIComponent("p 1/é")}`;
    const patched = await ws.call("PATCH", path, {
      body: { email: "pat@example.com", fields: { plan: null, lastName: "Lee" } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      id: "p 1/é",
      email: "pat@example.com",
      fields: { firstName: "Pat", lastName: "Lee", role: "", company: "" },
      alternativeEmails: ["p1@example.com"],
    });
    expect(patched.body.fields.plan).toBeUndefined();
    expect((await ws.call("GET", path)).body).toEqual(patched.body);
  });

  it("answer 404 member_not_found for an unknown member, and 409 for another member's e-mail", async () => {
    expect((await ws.call("GET", "/members/nobody")).body.code).toBe("member_not_found");
    expect((await ws.call("PATCH", "/members/nobody", { body: { fields: { a: "b" } } })).status).toBe(404);
    await ws.call("POST", "/members", {
      body: { members: [{ id: "own", email: "own@example.com" }, { id: "thief" }] },
    });
    const response = await ws.call("PATCH", "/members/thief", { body: { email: "OWN@example.com" } });
    expect(response.status).toBe(409);
    expect(response.body.code).toBe("member_identity_conflict");
  });

  it("answer 400 for an empty patch", async () => {
    await ws.call("POST", "/members", { body: { members: [{ id: "empty-patch" }] } });
    expect((await ws.call("PATCH", "/members/empty-patch", { body: {} })).status).toBe(400);
  });
});

describe("listMembers, listMemberAudiences and deleteMembers", () => {
  it("page through the workspace's members or one audience's, and say why a member is in each", async () => {
    const other = await createWorkspace(server);
    await other.call("POST", "/members", { body: { members: [{ id: "l1" }, { id: "l2" }, { id: "l3" }] } });
    const first = await other.call("GET", "/members?limit=2");
    expect(first.body.totalCount).toBe(3);
    expect(first.body.results.map((m: { id: string }) => m.id)).toEqual(["l3", "l2"]);
    const next = await other.call("GET", `/members?limit=2&after=${first.body.pageInfo.endCursor}`);
    expect(next.body.results.map((m: { id: string }) => m.id)).toEqual(["l1"]);
    expect(next.body.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });

    const manual = await createAudience(other, "Manual");
    const rule = await createAudience(other, "Rule");
    await addMembers(other, manual, { memberIds: ["l1"] });
    await other.call("PUT", `/audiences/${rule}/filter`, {
      body: { filter: { field: "id", op: "in", value: ["l1", "l2"] } },
    });
    const inAudience = await other.call("GET", `/members?audienceId=${manual}`);
    expect(inAudience.body.results.map((m: { id: string }) => m.id)).toEqual(["l1"]);
    expect(inAudience.body.totalCount).toBe(1);
    const audiences = await other.call("GET", "/members/l1/audiences");
    expect(audiences.body.results).toEqual([
      { id: rule, name: "Rule", isArchived: false, reason: "rule" },
      { id: manual, name: "Manual", isArchived: false, reason: "manual" },
    ]);
    const foreignCursor = await other.call(
      "GET",
      `/members?after=${(await other.call("GET", `/audiences/${manual}/members`)).body.pageInfo.endCursor}`,
    );
    expect(foreignCursor.body.code).toBe("invalid_cursor");

    const deleted = await other.call("DELETE", "/members", { body: { memberIds: ["l1", "ghost"] } });
    expect(deleted.body).toEqual({ deleted: 1, notFound: 1 });
    expect((await other.call("GET", `/audiences/${manual}/members`)).body.totalCount).toBe(0);
    expect((await other.call("GET", `/audiences/${rule}/filter`)).body.memberCount).toBe(1);
    expect((await other.call("GET", "/members/l1/audiences")).status).toBe(404);
  });
});

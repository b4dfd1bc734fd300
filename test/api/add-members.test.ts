import { describe, expect } from "vitest";
import { rejectionOf } from "../support/checked-client.ts";
import { addMembers, allMemberIds, createAudience, type TestWorkspace } from "../support/factories.ts";
import { it } from "../support/fixture.ts";
import { call, urlOf } from "../support/live-server.ts";

const MEMBERS = "/v0/workspaces/{workspaceId}/audiences/{audienceId}/members";

async function membersOf(ws: TestWorkspace, audienceId: string) {
  const page = await ws.api.GET(MEMBERS, {
    params: { path: { workspaceId: ws.id, audienceId }, query: { limit: 500, sortDirection: "ASC" } },
  });
  return page.results;
}

describe("addAudienceMembers", () => {
  it("creates unknown ids as members with no data and reports what it did", async ({ ws }) => {
    const audience = await createAudience(ws);
    expect(await addMembers(ws, audience, { memberIds: ["u1", "u2", "u2"] })).toEqual({
      added: 2,
      alreadyMembers: 0,
      created: 2,
      merged: 0,
    });
    const members = await membersOf(ws, audience);
    expect(members.map((m) => m.id).sort()).toEqual(["u1", "u2"]);
    expect(members[0]).toMatchObject({
      email: null,
      fields: { firstName: "", lastName: "", role: "", company: "" },
      alternativeEmails: [],
    });
  });

  it("counts members that were already there, and members of the workspace it did not create", async ({ ws }) => {
    const first = await createAudience(ws);
    const second = await createAudience(ws);
    await addMembers(ws, first, { memberIds: ["k1", "k2"] });
    expect(await addMembers(ws, first, { memberIds: ["k1", "k3"] })).toEqual({
      added: 1,
      alreadyMembers: 1,
      created: 1,
      merged: 0,
    });
    expect(await addMembers(ws, second, { memberIds: ["k1", "k2", "k3"] })).toEqual({
      added: 3,
      alreadyMembers: 0,
      created: 0,
      merged: 0,
    });
  });

  it("creates members from data and merges differing information into existing ones", async ({ ws }) => {
    const audience = await createAudience(ws);
    await addMembers(ws, audience, {
      members: [{ id: "ada", email: "ada@example.com", fields: { firstName: "Ada", role: "Engineer", plan: "pro" } }],
    });
    const result = await addMembers(ws, audience, {
      members: [
        { email: "ADA@example.com", fields: { lastName: "Lovelace", role: "Countess", firstName: "" } },
        { id: "ada", email: "countess@example.com", alternativeEmails: ["a.l@example.com"] },
      ],
    });
    expect(result).toEqual({ added: 0, alreadyMembers: 1, created: 0, merged: 1 });
    const [ada] = await membersOf(ws, audience);
    expect(ada).toMatchObject({
      id: "ada",
      email: "countess@example.com",
      fields: { firstName: "Ada", lastName: "Lovelace", role: "Countess", company: "", plan: "pro" },
      alternativeEmails: ["ada@example.com", "a.l@example.com"],
    });
  });

  it("matches a member by an alternative e-mail, keeping its primary one", async ({ ws }) => {
    const audience = await createAudience(ws);
    await addMembers(ws, audience, {
      members: [{ id: "grace", email: "grace@example.com", alternativeEmails: ["gh@navy.example"] }],
    });
    const result = await addMembers(ws, audience, {
      members: [{ email: "GH@navy.example", fields: { company: "Navy" } }],
    });
    expect(result).toMatchObject({ created: 0, merged: 1 });
    const members = await membersOf(ws, audience);
    expect(members).toHaveLength(1);
    expect(members[0]).toMatchObject({
      id: "grace",
      email: "grace@example.com",
      fields: { company: "Navy" },
      alternativeEmails: ["gh@navy.example"],
    });
  });

  it("gives members created from data a service id", async ({ ws }) => {
    const audience = await createAudience(ws);
    await addMembers(ws, audience, { members: [{ email: "new.person@example.com" }] });
    const [member] = await membersOf(ws, audience);
    expect(member?.id).toMatch(/^mem_[0-9A-Za-z]{20}$/);
  });

  it("answers 409 member_identity_conflict naming both members, and applies nothing", async ({ ws }) => {
    const audience = await createAudience(ws);
    await addMembers(ws, audience, {
      members: [
        { id: "c1", email: "one@example.com" },
        { id: "c2", email: "two@example.com" },
      ],
    });
    const error = await rejectionOf(
      addMembers(ws, audience, {
        memberIds: ["c3"],
        members: [
          { id: "c1", fields: { firstName: "Changed" } },
          { email: "one@example.com", alternativeEmails: ["two@example.com"] },
        ],
      }),
    );
    expect(error.status).toBe(409);
    expect(error.code).toBe("member_identity_conflict");
    expect(error.problem?.detail).toContain("c1");
    expect(error.problem?.detail).toContain("c2");
    const members = await membersOf(ws, audience);
    expect(members.map((m) => m.id).sort()).toEqual(["c1", "c2"]);
    expect(members.find((m) => m.id === "c1")?.fields.firstName).toBe("");
  });

  it("answers 400 when neither memberIds nor members holds a member", async ({ ws }) => {
    const audience = await createAudience(ws);
    for (const body of [{}, { memberIds: [] }, { memberIds: [], members: [] }]) {
      const error = await rejectionOf(addMembers(ws, audience, body));
      expect(error.status).toBe(400);
      expect(error.code).toBe("invalid_request");
    }
  });

  it("answers 400 too_many_items over 10,000 members in one request, and adds none", async ({ ws }) => {
    const audience = await createAudience(ws);
    const error = await rejectionOf(
      addMembers(ws, audience, {
        memberIds: Array.from({ length: 6000 }, (_, i) => `t${i}`),
        members: Array.from({ length: 4001 }, (_, i) => ({ id: `d${i}` })),
      }),
    );
    expect(error.status).toBe(400);
    expect(error.code).toBe("too_many_items");
    expect(await allMemberIds(ws, audience)).toEqual([]);
  });

  it("takes 10,000 ids in one request", async ({ ws }) => {
    const audience = await createAudience(ws);
    const memberIds = Array.from({ length: 10_000 }, (_, i) => `bulk-${i}`);
    const result = await addMembers(ws, audience, { memberIds });
    expect(result).toEqual({ added: 10_000, alreadyMembers: 0, created: 10_000, merged: 0 });
    const page = await ws.api.GET(MEMBERS, {
      params: { path: { workspaceId: ws.id, audienceId: audience }, query: { limit: 1 } },
    });
    expect(page.totalCount).toBe(10_000);
  });

  // Bodies the contract refuses, so the typed SDK cannot send them.
  it.for([
    ["a member id that is not a string", { memberIds: [7] }, "/body/memberIds/0"],
    ["an empty member id", { memberIds: [""] }, "/body/memberIds/0"],
    ["an invalid e-mail", { members: [{ email: "not-an-email" }] }, "/body/members/0/email"],
    [
      "a field value that is not a string",
      { members: [{ id: "x", fields: { age: 3 } }] },
      "/body/members/0/fields/age",
    ],
    [
      "a field key that is not allowed",
      { members: [{ id: "x", fields: { "bad key": "v" } }] },
      "/body/members/0/fields/bad key",
    ],
    ["a member with neither id nor e-mail", { members: [{ fields: { firstName: "A" } }] }, "/body/members/0"],
    ["an unknown member property", { members: [{ id: "x", phone: "1" }] }, "/body/members/0/phone"],
  ] as const)("answers 400 for %s", async ([_case, body, pointer], { ws, server }) => {
    const audienceId = await createAudience(ws);
    const url = urlOf(MEMBERS, { workspaceId: ws.id, audienceId });
    const response = await call(server, "POST", url, { token: ws.key, body });
    expect(response.status).toBe(400);
    expect(response.problem?.code).toBe("invalid_request");
    expect(response.problem?.errors?.[0]?.pointer).toBe(pointer);
  });

  it("answers 404 for an unknown audience", async ({ ws }) => {
    const error = await rejectionOf(addMembers(ws, "aud_nope", { memberIds: ["x"] }));
    expect(error.status).toBe(404);
    expect(error.code).toBe("audience_not_found");
  });
});

import { describe, expect } from "vitest";
import { createAudience } from "../support/factories.ts";
import { it } from "../support/fixture.ts";
import { call } from "../support/live-server.ts";

/**
 * The limits the contract states, each at the limit (accepted) and one past it (400, pointing at
 * the value): a limit off by one either way fails here. Limits of the filter language are tested
 * in test/unit/filter.test.ts, of cursors in test/security/forged-cursors.test.ts.
 */
const fields = (n: number, value = "v") => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, value]));
const emails = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `alt${from + i}@example.com`);
/** A valid address of exactly n characters. */
const emailOf = (n: number) =>
  `${"a".repeat(64)}@${"b".repeat(n - 64 - 1 - 4)}.org`.replace(/b{63}/g, (b) => `${b.slice(0, 62)}.`);

describe("limits stated by the contract, at the limit and one past it", () => {
  it("member data: 50 fields, values of 1,024 characters, ids of 255, addresses of 254, 20 alternatives", async ({
    server,
    ws,
  }) => {
    const upsert = (member: Record<string, unknown>) =>
      call(server, "POST", `/v0/workspaces/${ws.id}/members`, { token: ws.key, body: { members: [member] } });
    const cases: [string, Record<string, unknown>, Record<string, unknown>, string][] = [
      ["fields", { id: "f", fields: fields(50) }, { id: "f", fields: fields(51) }, "/body/members/0/fields"],
      [
        "a field value",
        { id: "v", fields: { k: "x".repeat(1024) } },
        { id: "v", fields: { k: "x".repeat(1025) } },
        "/body/members/0/fields/k",
      ],
      ["an id", { id: "i".repeat(255) }, { id: "i".repeat(256) }, "/body/members/0/id"],
      ["an e-mail", { email: emailOf(254) }, { email: emailOf(255) }, "/body/members/0/email"],
      [
        "alternative e-mails",
        { id: "e", alternativeEmails: emails(20) },
        { id: "e", alternativeEmails: emails(21) },
        "/body/members/0/alternativeEmails",
      ],
    ];
    for (const [what, atLimit, past, pointer] of cases) {
      expect((await upsert(atLimit)).status, `${what} at the limit`).toBe(200);
      const refused = await upsert(past);
      expect(refused.status, `${what} past the limit`).toBe(400);
      expect(
        refused.problem?.errors?.map((e) => e.pointer),
        what,
      ).toContain(pointer);
    }
  });

  it("a member accumulates 100 alternative e-mails over several writes, not 101", async ({ server, ws }) => {
    const upsert = (alternativeEmails: string[]) =>
      call(server, "POST", `/v0/workspaces/${ws.id}/members`, {
        token: ws.key,
        body: { members: [{ id: "many", alternativeEmails }] },
      });
    for (let from = 0; from < 100; from += 20) expect((await upsert(emails(20, from))).status).toBe(200);
    const refused = await upsert(emails(1, 100));
    expect(refused.status).toBe(400);
    expect(refused.problem).toMatchObject({
      code: "invalid_request",
      errors: [{ pointer: "/body/members/0/alternativeEmails" }],
    });
    const member = await call(server, "GET", `/v0/workspaces/${ws.id}/members/many`, { token: ws.key });
    expect((member.data as { alternativeEmails: string[] }).alternativeEmails).toHaveLength(100);
  });

  it("an audience name of 200 characters, a page of 500 members", async ({ server, ws }) => {
    const create = (name: string) =>
      call(server, "POST", `/v0/workspaces/${ws.id}/audiences`, { token: ws.key, body: { name } });
    expect((await create("n".repeat(200))).status).toBe(201);
    expect((await create("m".repeat(201))).problem?.errors?.[0]?.pointer).toBe("/body/name");
    const audienceId = await createAudience(ws, "Paged");
    for (const limit of [500, 501]) {
      const page = await call(server, "GET", `/v0/workspaces/${ws.id}/audiences/${audienceId}/members?limit=${limit}`, {
        token: ws.key,
      });
      expect(page.status, `limit=${limit}`).toBe(limit === 500 ? 200 : 400);
    }
  });
});

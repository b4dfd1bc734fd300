import { describe, expect } from "vitest";
import { addMembers, createAudience, upsertMembers } from "../support/factories.ts";
import { it } from "../support/fixture.ts";
import { importCsv } from "../support/imports.ts";
import { ADMIN_TOKEN, call, type RawResponse } from "../support/live-server.ts";

/**
 * The limits the contract states, each at the limit (accepted) and one past it (400, pointing at
 * the value): a limit off by one either way fails here. Limits of the filter language are tested
 * in test/unit/filter.test.ts, of cursors in test/security/forged-cursors.test.ts, of webhook settings
 * in limits-webhooks.test.ts; 10,001 addAudienceMembers entries in add-members.test.ts.
 */
const fields = (n: number, value = "v") => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, value]));
const emails = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `alt${from + i}@example.com`);
/** A 400 invalid_request pointing at the value. */
function expectRefused(response: RawResponse, pointer: string, what: string) {
  expect(response.status, what).toBe(400);
  expect(response.problem?.code, what).toBe("invalid_request");
  expect(
    response.problem?.errors?.map((e) => e.pointer),
    what,
  ).toContain(pointer);
}
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

  it("an API key name of 100 characters, on the admin route", async ({ server, ws }) => {
    const create = (name: string) =>
      call(server, "POST", `/v0/workspaces/${ws.id}/api-keys`, { token: ADMIN_TOKEN, body: { name } });
    const created = await create("k".repeat(100));
    expect(created.status).toBe(201);
    expect((created.data as { name: string }).name).toBe("k".repeat(100));
    expectRefused(await create("k".repeat(101)), "/body/name", "a name of 101 characters");
  });

  it("10,000 entries in all on addAudienceMembers, ids and members together", async ({ ws }) => {
    const audienceId = await createAudience(ws);
    const result = await addMembers(ws, audienceId, {
      memberIds: Array.from({ length: 6000 }, (_, i) => `t${i}`),
      members: Array.from({ length: 4000 }, (_, i) => ({ id: `d${i}` })),
    });
    expect(result).toEqual({ added: 10_000, alreadyMembers: 0, created: 10_000, merged: 0 });
  });

  it("a member search of 200 characters, on the workspace and in an audience", async ({ server, ws }) => {
    const term = "z".repeat(200);
    await upsertMembers(ws, [{ id: "found", fields: { company: term } }, { id: "other" }]);
    const audienceId = await createAudience(ws);
    await addMembers(ws, audienceId, { memberIds: ["found", "other"] });
    for (const path of [`/v0/workspaces/${ws.id}/members`, `/v0/workspaces/${ws.id}/audiences/${audienceId}/members`]) {
      const page = await call(server, "GET", `${path}?search=${term}`, { token: ws.key });
      expect(page.status, path).toBe(200);
      expect(page.data, path).toMatchObject({ totalCount: 1, results: [{ id: "found" }] });
      expectRefused(await call(server, "GET", `${path}?search=${term}z`, { token: ws.key }), "/query/search", path);
    }
  });

  it("a preview of 100 members", async ({ server, ws }) => {
    await upsertMembers(
      ws,
      Array.from({ length: 101 }, (_, i) => ({ id: `p${i}` })),
    );
    const preview = (limit: number) =>
      call(server, "POST", `/v0/workspaces/${ws.id}/audiences/preview`, {
        token: ws.key,
        body: { filter: { field: "id", op: "startsWith", value: "p" }, limit },
      });
    const shown = await preview(100);
    expect(shown.status).toBe(200);
    const data = shown.data as { totalCount: number; results: unknown[] };
    expect([data.totalCount, data.results.length]).toEqual([101, 100]);
    expectRefused(await preview(101), "/body/limit", "a preview of 101");
  });

  it("a page of 1,000 events, and of 20 event types", async ({ server, ws }) => {
    // One event per write: 1,001 writes, so that a page of 1,000 is full and has a next page.
    for (let from = 0; from < 1001; from += 50) {
      const ids = Array.from({ length: Math.min(50, 1001 - from) }, (_, i) => `e${from + i}`);
      await Promise.all(ids.map((id) => upsertMembers(ws, [{ id }])));
    }
    const feed = (query: string) => call(server, "GET", `/v0/workspaces/${ws.id}/events?${query}`, { token: ws.key });
    type Page = { results: unknown[]; pageInfo: { hasNextPage: boolean } };
    // Events are published just after their write commits: the page is full, with a next one,
    // once the 1,001st is.
    const next = async () => ((await feed("limit=1000")).data as Page).pageInfo.hasNextPage;
    await expect.poll(next, { timeout: 20_000, interval: 50 }).toBe(true);
    const page = await feed("limit=1000");
    expect((page.data as Page).results).toHaveLength(1000);
    expectRefused(await feed("limit=1001"), "/query/limit", "a page of 1,001 events");

    const types = (n: number) => Array.from({ length: n }, () => "members.created").join(",");
    const typed = await feed(`limit=1000&types=${types(20)}`);
    expect(typed.status).toBe(200);
    expect((typed.data as { results: unknown[] }).results).toHaveLength(1000);
    expectRefused(await feed(`types=${types(21)}`), "/query/types", "21 event types");
  });

  it("a list of 100 imports, newest first", async ({ server, ws }) => {
    const ids: string[] = [];
    for (let i = 0; i < 101; i++) ids.push((await importCsv(ws, `id\nimported${i}\n`)).id);
    const list = (limit: number) =>
      call(server, "GET", `/v0/workspaces/${ws.id}/imports?limit=${limit}`, { token: ws.key });
    const listed = await list(100);
    expect(listed.status).toBe(200);
    expect((listed.data as { results: { id: string }[] }).results.map((job) => job.id)).toEqual(ids.slice(1).reverse());
    expectRefused(await list(101), "/query/limit", "a list of 101 imports");
  });
});

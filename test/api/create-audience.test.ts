import { describe, expect } from "vitest";
import { rejectionOf } from "../support/checked-client.ts";
import { createAudience, createWorkspace, type TestWorkspace } from "../support/factories.ts";
import { it } from "../support/fixture.ts";
import { call, type RequestOptions, urlOf } from "../support/live-server.ts";

const AUDIENCES = "/v0/workspaces/{workspaceId}/audiences";
const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";

const create = (ws: TestWorkspace, name: string) =>
  ws.api.POST(AUDIENCES, { params: { path: { workspaceId: ws.id } }, body: { name } });
const read = (ws: TestWorkspace, audienceId: string) =>
  ws.api.GET(AUDIENCE, { params: { path: { workspaceId: ws.id, audienceId } } });
/** A request the contract refuses, so the typed SDK cannot send it. */
const createRaw = (server: { baseUrl: string }, ws: TestWorkspace, options: RequestOptions) =>
  call(server, "POST", urlOf(AUDIENCES, { workspaceId: ws.id }), { token: ws.key, ...options });

describe("createAudience", () => {
  it("answers 201 with only the new id, and the audience starts empty", async ({ ws }) => {
    const created = await ws.api.raw.POST(AUDIENCES, {
      params: { path: { workspaceId: ws.id } },
      body: { name: "Weekly digest" },
    });
    expect(created.response.status).toBe(201);
    const id = created.data?.id ?? "";
    expect(Object.keys(created.data ?? {})).toEqual(["id"]);
    expect(id).toMatch(/^aud_[0-9A-Za-z]{20}$/);

    expect(await read(ws, id)).toEqual({ id, name: "Weekly digest" });
    const members = await ws.api.GET(`${AUDIENCE}/members`, {
      params: { path: { workspaceId: ws.id, audienceId: id } },
    });
    expect(members.totalCount).toBe(0);
    expect(members.results).toEqual([]);
  });

  it("stores the name trimmed", async ({ ws }) => {
    const id = await createAudience(ws, "  Padded name  ");
    expect((await read(ws, id)).name).toBe("Padded name");
  });

  it("rejects a name already used in the workspace, compared case-insensitively", async ({ ws }) => {
    await create(ws, "Beta testers");
    const again = await rejectionOf(create(ws, " BETA TESTERS"));
    expect(again.status).toBe(409);
    expect(again.response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(again.code).toBe("audience_name_taken");
  });

  it("allows the same name in another workspace", async ({ ws, server }) => {
    await create(ws, "Shared name");
    const other = await createWorkspace(server);
    await expect(create(other, "Shared name")).resolves.toMatchObject({ id: expect.stringMatching(/^aud_/) });
  });

  it("gives exactly one of 20 concurrent creates of one name a 201", async ({ ws }) => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        ws.api.raw.POST(AUDIENCES, { params: { path: { workspaceId: ws.id } }, body: { name: "Race" } }),
      ),
    );
    const statuses = answers.map((a) => a.response.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    const list = await ws.api.GET(AUDIENCES, { params: { path: { workspaceId: ws.id }, query: { search: "race" } } });
    expect(list.results.map((a) => a.name)).toEqual(["Race"]);
  });

  it.for([
    ["a missing name", {}, "/body/name"],
    ["an empty name", { name: "" }, "/body/name"],
    ["a name of only spaces", { name: "   " }, "/body/name"],
    ["a name over 200 characters", { name: "n".repeat(201) }, "/body/name"],
    ["a name with a control character", { name: "a\u0000b" }, "/body/name"],
    ["a name that is not a string", { name: 42 }, "/body/name"],
    ["an unknown property", { name: "ok", filter: {} }, "/body/filter"],
  ] as const)("answers 400 invalid_request for %s, pointing at it", async ([_case, body, pointer], { ws, server }) => {
    const response = await createRaw(server, ws, { body });
    expect(response.status).toBe(400);
    expect(response.problem?.code).toBe("invalid_request");
    expect(response.problem?.errors?.[0]?.pointer).toBe(pointer);
  });

  it("answers 400 malformed_json for a body that is not JSON", async ({ ws, server }) => {
    const response = await createRaw(server, ws, {
      rawBody: '{"name": "unterminated',
      headers: { "content-type": "application/json" },
    });
    expect(response.status).toBe(400);
    expect(response.problem?.code).toBe("malformed_json");
  });

  it("answers 415 for a body that is not application/json", async ({ ws, server }) => {
    const response = await createRaw(server, ws, {
      rawBody: "name=Text",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(response.status).toBe(415);
    expect(response.problem?.code).toBe("unsupported_media_type");
  });

  it("answers 413 for a body over the limit, and creates nothing", async ({ ws, server }) => {
    const all = async () =>
      (await ws.api.GET(AUDIENCES, { params: { path: { workspaceId: ws.id }, query: { includeArchived: true } } }))
        .results;
    const before = await all();
    const response = await createRaw(server, ws, { body: { name: "big", pad: "x".repeat(2_000_000) } });
    expect(response.status).toBe(413);
    expect(response.problem?.code).toBe("payload_too_large");
    expect(await all()).toHaveLength(before.length);
  });
});

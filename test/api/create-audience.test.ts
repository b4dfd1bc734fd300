import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorkspace, type TestWorkspace } from "../support/factories.ts";
import { type LiveServer, startLiveServer } from "../support/live-server.ts";

let server: LiveServer;
let ws: TestWorkspace;

beforeAll(async () => {
  server = await startLiveServer();
  ws = await createWorkspace(server);
});
afterAll(() => server.close());

describe("createAudience", () => {
  it("answers 201 with only the new id, and the audience starts empty", async () => {
    const created = await ws.call("POST", "/audiences", { body: { name: "Weekly digest" } });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body)).toEqual(["id"]);
    expect(created.body.id).toMatch(/^aud_[0-9A-Za-z]{20}$/);

    const audience = await ws.call("GET", `/audiences/${created.body.id}`);
    expect(audience.body).toEqual({ id: created.body.id, name: "Weekly digest" });
    const members = await ws.call("GET", `/audiences/${created.body.id}/members`);
    expect(members.body.totalCount).toBe(0);
    expect(members.body.results).toEqual([]);
  });

  it("stores the name trimmed", async () => {
    const created = await ws.call("POST", "/audiences", { body: { name: "  Padded name  " } });
    const audience = await ws.call("GET", `/audiences/${created.body.id}`);
    expect(audience.body.name).toBe("Padded name");
  });

  it("rejects a name already used in the workspace, compared case-insensitively", async () => {
    await ws.call("POST", "/audiences", { body: { name: "Beta testers" } });
    const again = await ws.call("POST", "/audiences", { body: { name: " BETA TESTERS" } });
    expect(again.status).toBe(409);
    expect(again.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(again.body.code).toBe("audience_name_taken");
  });

  it("allows the same name in another workspace", async () => {
    await ws.call("POST", "/audiences", { body: { name: "Shared name" } });
    const other = await createWorkspace(server);
    const created = await other.call("POST", "/audiences", { body: { name: "Shared name" } });
    expect(created.status).toBe(201);
  });

  it("gives exactly one of 20 concurrent creates of one name a 201", async () => {
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => ws.call("POST", "/audiences", { body: { name: "Race" } })),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    const list = await ws.call("GET", "/audiences?search=race");
    expect(list.body.results.map((a: { name: string }) => a.name)).toEqual(["Race"]);
  });

  it.each([
    ["a missing name", {}, "/body/name"],
    ["an empty name", { name: "" }, "/body/name"],
    ["a name of only spaces", { name: "   " }, "/body/name"],
    ["a name over 200 characters", { name: "n".repeat(201) }, "/body/name"],
    ["a name with a control character", { name: "a\u0000b" }, "/body/name"],
    ["a name that is not a string", { name: 42 }, "/body/name"],
    ["an unknown property", { name: "ok", filter: {} }, "/body/filter"],
  ])("answers 400 invalid_request for %s, pointing at it", async (_case, body, pointer) => {
    const response = await ws.call("POST", "/audiences", { body });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe("invalid_request");
    expect(response.body.errors[0].pointer).toBe(pointer);
  });

  it("answers 400 malformed_json for a body that is not JSON", async () => {
    const response = await ws.call("POST", "/audiences", {
      rawBody: '{"name": "unterminated',
      headers: { "content-type": "application/json" },
    });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe("malformed_json");
  });

  it("answers 415 for a body that is not application/json", async () => {
    const response = await ws.call("POST", "/audiences", {
      rawBody: "name=Text",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(response.status).toBe(415);
    expect(response.body.code).toBe("unsupported_media_type");
  });

  it("answers 413 for a body over the limit, and creates nothing", async () => {
    const before = await ws.call("GET", "/audiences?includeArchived=true");
    const response = await ws.call("POST", "/audiences", { body: { name: "big", pad: "x".repeat(2_000_000) } });
    expect(response.status).toBe(413);
    expect(response.body.code).toBe("payload_too_large");
    const after = await ws.call("GET", "/audiences?includeArchived=true");
    expect(after.body.results).toHaveLength(before.body.results.length);
  });
});

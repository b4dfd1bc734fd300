import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAudience, createWorkspace, type TestWorkspace } from "../support/factories.ts";
import { type LiveServer, startLiveServer } from "../support/live-server.ts";

let server: LiveServer;
let ws: TestWorkspace;

beforeAll(async () => {
  server = await startLiveServer();
  ws = await createWorkspace(server);
});
afterAll(() => server.close());

describe("getAudience", () => {
  it("answers exactly id and name", async () => {
    const id = await createAudience(ws, "Readers");
    const response = await ws.call("GET", `/audiences/${id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id, name: "Readers" });
  });

  it("still answers for an archived audience", async () => {
    const id = await createAudience(ws, "Old readers");
    await ws.call("DELETE", `/audiences/${id}`);
    const response = await ws.call("GET", `/audiences/${id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id, name: "Old readers" });
  });

  it("answers 404 audience_not_found for an unknown id", async () => {
    const response = await ws.call("GET", "/audiences/aud_doesNotExist000000");
    expect(response.status).toBe(404);
    expect(response.body.code).toBe("audience_not_found");
  });

  it("answers 404 for another workspace's audience, as if it did not exist", async () => {
    const other = await createWorkspace(server);
    const theirs = await createAudience(other, "Theirs");
    const response = await ws.call("GET", `/audiences/${theirs}`);
    expect(response.status).toBe(404);
    expect(response.body.code).toBe("audience_not_found");
  });

  it("answers 400 for an id that cannot be an audience id", async () => {
    const response = await ws.call("GET", `/audiences/${encodeURIComponent("a'b;--")}`);
    expect(response.status).toBe(400);
    expect(response.body.errors[0].pointer).toBe("/params/audienceId");
  });
});

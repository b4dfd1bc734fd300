import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAudience, createWorkspace, type TestWorkspace } from "../support/factories.ts";
import { call, type LiveServer, startLiveServer } from "../support/live-server.ts";

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

describe("getAudience after a rename", () => {
  it("answers the new name at once, though the old one was just read", async () => {
    const id = await createAudience(ws, "Before");
    expect((await ws.call("GET", `/audiences/${id}`)).body.name).toBe("Before");
    await ws.call("PATCH", `/audiences/${id}`, { body: { name: "After" } });
    expect((await ws.call("GET", `/audiences/${id}`)).body).toEqual({ id, name: "After" });
  });

  // Two servers on one PostgreSQL database, as behind a load balancer. The reader trusts what it
  // remembers for an hour, so only the database's notification can make it answer the new name.
  it.runIf(process.env.TEST_DATABASE_URL)(
    "answers another server's rename without waiting for its memory to expire",
    async () => {
      const reader = await startLiveServer({ databaseUrl: server.databaseUrl, audienceCacheTtlMs: 3_600_000 });
      try {
        const id = await createAudience(ws, "Seen by both");
        const read = () => call(reader, "GET", `/v0/workspaces/${ws.id}/audiences/${id}`, { token: ws.key });
        expect((await read()).body.name).toBe("Seen by both");
        await ws.call("PATCH", `/audiences/${id}`, { body: { name: "Renamed elsewhere" } });
        await expect.poll(async () => (await read()).body.name, { timeout: 10_000 }).toBe("Renamed elsewhere");
      } finally {
        await reader.close();
      }
    },
  );
});

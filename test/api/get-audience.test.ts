import { describe, expect } from "vitest";
import { checkedClient, rejectionOf } from "../support/checked-client.ts";
import { createAudience, createWorkspace } from "../support/factories.ts";
import { it } from "../support/fixture.ts";
import { startLiveServer } from "../support/live-server.ts";

const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";

describe("getAudience", () => {
  it("answers exactly id and name", async ({ api, workspaceId, ws }) => {
    const audienceId = await createAudience(ws, "Readers");
    const audience = await api.GET(AUDIENCE, { params: { path: { workspaceId, audienceId } } });
    expect(audience).toEqual({ id: audienceId, name: "Readers" });
  });

  it("still answers for an archived audience", async ({ api, workspaceId, ws }) => {
    const audienceId = await createAudience(ws, "Old readers");
    const path = { workspaceId, audienceId };
    await api.DELETE(AUDIENCE, { params: { path } });
    expect(await api.GET(AUDIENCE, { params: { path } })).toEqual({ id: audienceId, name: "Old readers" });
  });

  it("answers 404 audience_not_found for an unknown id", async ({ api, workspaceId }) => {
    const path = { workspaceId, audienceId: "aud_doesNotExist000000" };
    const error = await rejectionOf(api.GET(AUDIENCE, { params: { path } }));
    expect(error.status).toBe(404);
    expect(error.code).toBe("audience_not_found");
  });

  it("answers 404 for another workspace's audience, as if it did not exist", async ({ api, workspaceId, server }) => {
    const theirs = await createAudience(await createWorkspace(server), "Theirs");
    const error = await rejectionOf(api.GET(AUDIENCE, { params: { path: { workspaceId, audienceId: theirs } } }));
    expect(error.status).toBe(404);
    expect(error.code).toBe("audience_not_found");
  });

  it("answers 400 for an id that cannot be an audience id", async ({ api, workspaceId }) => {
    const error = await rejectionOf(api.GET(AUDIENCE, { params: { path: { workspaceId, audienceId: "a'b;--" } } }));
    expect(error.status).toBe(400);
    expect(error.problem?.errors?.[0]?.pointer).toBe("/params/audienceId");
  });
});

describe("getAudience after a rename", () => {
  it("answers the new name at once, though the old one was just read", async ({ api, workspaceId, ws }) => {
    const audienceId = await createAudience(ws, "Before");
    const path = { workspaceId, audienceId };
    expect((await api.GET(AUDIENCE, { params: { path } })).name).toBe("Before");
    await api.PATCH(AUDIENCE, { params: { path }, body: { name: "After" } });
    expect(await api.GET(AUDIENCE, { params: { path } })).toEqual({ id: audienceId, name: "After" });
  });

  // Two servers on one PostgreSQL database, as behind a load balancer. The reader trusts what it
  // remembers for an hour, so only the database's notification can make it answer the new name.
  it.runIf(process.env.TEST_DATABASE_URL)(
    "answers another server's rename without waiting for its memory to expire",
    async ({ api, workspaceId, ws, server }) => {
      const reader = await startLiveServer({ databaseUrl: server.databaseUrl, audienceCacheTtlMs: 3_600_000 });
      try {
        const audienceId = await createAudience(ws, "Seen by both");
        const path = { workspaceId, audienceId };
        const read = async () => (await checkedClient(reader.baseUrl, ws.key).GET(AUDIENCE, { params: { path } })).name;
        expect(await read()).toBe("Seen by both");
        await api.PATCH(AUDIENCE, { params: { path }, body: { name: "Renamed elsewhere" } });
        await expect.poll(read, { timeout: 10_000 }).toBe("Renamed elsewhere");
      } finally {
        await reader.close();
      }
    },
  );
});

import { test as base } from "vitest";
import { checkedClient } from "./checked-client.ts";
import { createWorkspace } from "./factories.ts";
import { ADMIN_TOKEN, startLiveServer } from "./live-server.ts";

/**
 * The API tests' fixture (vitest's test.extend):
 *
 *   it("creates an audience", async ({ api, workspaceId }) => {
 *     const { id } = await api.POST("/v0/workspaces/{workspaceId}/audiences", {
 *       params: { path: { workspaceId } },
 *       body: { name: "Readers" },
 *     });
 *   });
 *
 * - server: one live server per test file (embedded store, or a PostgreSQL database of its own
 *   with TEST_DATABASE_URL), started by the first test that needs it and closed after the file.
 * - admin: the typed SDK with the admin token.
 * - ws: a fresh workspace per test, with its own API key (see TestWorkspace), for the factories.
 * - api, workspaceId: that workspace's typed SDK and id.
 *
 * Every client checks every response against the contract before the test sees it.
 */
export const test = base
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
  .extend("server", { scope: "file" }, async ({}, { onCleanup }) => {
    const server = await startLiveServer();
    onCleanup(() => server.close());
    return server;
  })
  .extend("admin", { scope: "file" }, ({ server }) => checkedClient(server.baseUrl, ADMIN_TOKEN))
  .extend("ws", ({ server }) => createWorkspace(server))
  .extend("api", ({ ws }) => ws.api)
  .extend("workspaceId", ({ ws }) => ws.id);

export const it = test;

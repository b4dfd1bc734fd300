import { test as base } from "vitest";
import { checkedClient } from "./checked-client.ts";
import { createWorkspace } from "./factories.ts";
import { ADMIN_TOKEN, type LiveServer, startLiveServer } from "./live-server.ts";

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
 * - server: a live server with the default settings (embedded store, or a PostgreSQL database
 *   of its own with TEST_DATABASE_URL), started by the first test that needs it. One per worker
 *   process: the files a worker runs one after another share it where their project runs them
 *   in one process (vitest.config.ts, isolate: false), and each file has its own elsewhere.
 *   A file whose tests read or change more than their own workspaces (the whole store, its
 *   statistics) takes its own server instead: testOnOwnServer.
 * - admin: the typed SDK with the admin token.
 * - ws: a fresh workspace per test, with its own API key (see TestWorkspace), for the factories.
 * - api, workspaceId: that workspace's typed SDK and id.
 *
 * Every client checks every response against the contract before the test sees it.
 */

/** The worker's server, whichever chain of fixtures asked first (a file's test.extend is a chain of its own). */
let shared: Promise<LiveServer> | undefined;

export const test = base
  // Starting a server (a store from the template, the application, its contract's validators)
  // is most of a short file's time; its workspaces keep the tests apart.
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
  .extend("workerServer", { scope: "worker" }, async ({}, { onCleanup }) => {
    if (shared) return shared;
    const started = startLiveServer();
    shared = started;
    // A server that failed to start is tried again by the next file.
    started.catch(() => {
      if (shared === started) shared = undefined;
    });
    // Closed once, when the worker ends, by the chain that started it.
    onCleanup(async () => {
      if (shared === started) shared = undefined;
      await (await started).close();
    });
    return started;
  })
  .extend("server", { scope: "file" }, ({ workerServer }) => workerServer)
  .extend("admin", { scope: "file" }, ({ server }) => checkedClient(server.baseUrl, ADMIN_TOKEN))
  .extend("ws", ({ server }) => createWorkspace(server))
  .extend("api", ({ ws }) => ws.api)
  .extend("workspaceId", ({ ws }) => ws.id);

export const it = test;

/** The same fixture with a fresh server of the default settings for this file alone. */
// biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
export const testOnOwnServer = test.extend("server", { scope: "file" }, async ({}, { onCleanup }) => {
  const server = await startLiveServer();
  onCleanup(() => server.close());
  return server;
});

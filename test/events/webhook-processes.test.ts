// Deliveries survive a crash and are shared by several server processes: the real server, in its
// own processes, killed with SIGKILL while deliveries are pending.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  createTestDatabase,
  killProcessGroup,
  PROCESS_ADMIN_TOKEN,
  type ServerProcess,
  send,
  startServerProcess,
  stopServerProcess,
} from "../reliability/server-process.ts";
import { startReceiver } from "./event-support.ts";

const WEBHOOK_ENV = { WEBHOOK_ALLOW_PRIVATE: "true", WEBHOOK_TIMEOUT_MS: "1000" };

/** A store the processes share: a data directory, or a PostgreSQL database. */
async function sharedStore(): Promise<{ env: Record<string, string>; drop: () => Promise<void> }> {
  if (process.env.TEST_DATABASE_URL) {
    const database = await createTestDatabase(process.env.TEST_DATABASE_URL);
    return { env: { DATABASE_URL: database.url }, drop: database.drop };
  }
  const dir = await mkdtemp(join(tmpdir(), "audience-webhooks-"));
  return { env: { DATA_DIR: dir }, drop: () => rm(dir, { recursive: true, force: true }) };
}

/** A workspace and key made with the admin token on a running process. */
async function workspaceOn(server: ServerProcess) {
  const admin = (path: string, body: unknown) =>
    fetch(server.baseUrl + path, {
      method: "POST",
      headers: { authorization: `Bearer ${PROCESS_ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    }).then((r) => r.json() as Promise<{ id: string; key: string }>);
  const ws = await admin("/v0/workspaces", { name: "Deliveries" });
  const key = await admin(`/v0/workspaces/${ws.id}/api-keys`, { name: "test" });
  return { workspaceId: ws.id, apiKey: key.key };
}

/** Every event id of the feed. */
async function feedIds(server: ServerProcess, apiKey: string, workspaceId: string): Promise<string[]> {
  const page = await send(server, apiKey, "GET", `/v0/workspaces/${workspaceId}/events?limit=1000`);
  return (page.body.results as { id: string }[]).map((e) => e.id);
}

describe("webhook deliveries across processes", () => {
  it("are all made after the server is killed with SIGKILL while they are pending", async () => {
    const store = await sharedStore();
    let receiverUp = false;
    const receiver = await startReceiver(() => (receiverUp ? 200 : 503));
    let server = await startServerProcess({ ...store.env, ...WEBHOOK_ENV });
    try {
      const { workspaceId, apiKey } = await workspaceOn(server);
      const path = `/v0/workspaces/${workspaceId}`;
      expect((await send(server, apiKey, "POST", `${path}/webhooks`, { url: receiver.url })).status).toBe(201);
      for (let i = 0; i < 20; i++) {
        const audience = await send(server, apiKey, "POST", `${path}/audiences`, { name: `Audience ${i}` });
        await send(server, apiKey, "POST", `${path}/audiences/${audience.body.id}/members`, { memberIds: [`m${i}`] });
      }
      // Some deliveries have been attempted and refused; others are still to be published.
      await receiver.waitFor(1);
      await killProcessGroup(server);

      receiverUp = true;
      server = await startServerProcess({ ...store.env, ...WEBHOOK_ENV });
      // The restarted process publishes what the killed one had not, and delivers every event.
      await expect.poll(() => feedIds(server, apiKey, workspaceId), { timeout: 30_000 }).toHaveLength(60);
      const ids = await feedIds(server, apiKey, workspaceId);
      const delivered = () => new Set(receiver.received.map((r) => String(r.headers["webhook-id"])));
      await expect
        .poll(() => ids.filter((id) => !delivered().has(id)).length, { timeout: 60_000, interval: 100 })
        .toBe(0);
      console.info(
        `crash test: ${ids.length} events, ${receiver.received.length} requests received, ` +
          `${new Set(receiver.received.map((r) => r.headers["webhook-id"])).size} distinct events delivered`,
      );
    } finally {
      await stopServerProcess(server);
      await receiver.close();
      await store.drop();
    }
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    "are shared by two processes on one database without delivering an event twice at once",
    async () => {
      const store = await sharedStore();
      const inFlight = new Map<string, number>();
      let overlaps = 0;
      const receiver = await startReceiver(async (request) => {
        // The same event goes to both webhooks (their paths differ); per webhook, never twice at once.
        const id = `${request.path} ${request.headers["webhook-id"]}`;
        const now = (inFlight.get(id) ?? 0) + 1;
        inFlight.set(id, now);
        if (now > 1) overlaps++;
        await new Promise((resolve) => setTimeout(resolve, 20));
        inFlight.set(id, (inFlight.get(id) ?? 1) - 1);
        return 200;
      });
      const first = await startServerProcess({ ...store.env, ...WEBHOOK_ENV });
      const second = await startServerProcess({ ...store.env, ...WEBHOOK_ENV });
      try {
        const { workspaceId, apiKey } = await workspaceOn(first);
        const path = `/v0/workspaces/${workspaceId}`;
        await send(first, apiKey, "POST", `${path}/webhooks`, { url: receiver.url });
        await send(first, apiKey, "POST", `${path}/webhooks`, { url: `${receiver.url}?second` });
        await Promise.all(
          [first, second].map(async (server, s) => {
            for (let i = 0; i < 50; i++)
              await send(server, apiKey, "POST", `${path}/audiences`, { name: `P${s} ${i}` });
          }),
        );
        await expect
          .poll(() => new Set(receiver.received.map((r) => `${r.path} ${r.headers["webhook-id"]}`)).size, {
            timeout: 60_000,
            interval: 100,
          })
          .toBe(200);
        const duplicates = receiver.received.length - 200;
        console.info(
          `two processes: 100 events x 2 webhooks, ${receiver.received.length} requests, ${duplicates} repeated, ${overlaps} concurrent duplicates`,
        );
        expect(overlaps).toBe(0);
      } finally {
        await Promise.all([stopServerProcess(first), stopServerProcess(second)]);
        await receiver.close();
        await store.drop();
      }
    },
  );
});

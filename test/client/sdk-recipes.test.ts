// The sync recipe (docs/events.md) and the webhook receiver (docs/webhooks.md), run as a consumer would run them.
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { describe, expect } from "vitest";
import { it } from "../events/webhook-fixture.ts";
import { addMembers, createAudience } from "../support/factories.ts";
import { EXAMPLES_DIR, REPO_ROOT, spawnExample } from "./sdk-support.ts";

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

describe("the event guides' examples", () => {
  it("are packages/client/examples/sync-example.ts and receiver-example.ts, word for word", () => {
    const guides = { "sync-example.ts": "docs/events.md", "receiver-example.ts": "docs/webhooks.md" };
    for (const [file, guide] of Object.entries(guides)) {
      const text = readFileSync(`${REPO_ROOT}${guide}`, "utf8");
      expect(text).toContain(`\`\`\`ts\n${readFileSync(`${REPO_ROOT}${EXAMPLES_DIR}${file}`, "utf8")}\`\`\``);
    }
  });

  it("sync recipe: copies an audience, then follows its changes to the same members", async ({ server, ws }) => {
    const audienceId = await createAudience(ws, "Synced");
    await addMembers(ws, audienceId, { memberIds: ["ada", "bob"] });
    const sync = spawnExample("sync-example.ts", {
      API_URL: server.baseUrl,
      WORKSPACE_ID: ws.id,
      API_KEY: ws.key,
      AUDIENCE_ID: audienceId,
    });
    try {
      await sync.waitFor(/^copied 2 members$/);
      await addMembers(ws, audienceId, { memberIds: ["cy"] });
      await ws.api.DELETE("/v0/workspaces/{workspaceId}/audiences/{audienceId}/members", {
        params: { path: { workspaceId: ws.id, audienceId } },
        body: { memberIds: ["ada"] },
      });
      await sync.waitFor(/^2 members: bob cy$/);
    } finally {
      await sync.stop();
    }
  });

  it("receiver: verifies each delivery and prints its event", async ({ api, workspaceId, ws }) => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/`;
    const { secret } = await api.POST("/v0/workspaces/{workspaceId}/webhooks", {
      params: { path: { workspaceId } },
      body: { url, types: ["audience.created"] },
    });
    const receiver = spawnExample("receiver-example.ts", { WEBHOOK_SECRET: secret, PORT: String(port) });
    try {
      await receiver.waitFor(/^receiving webhooks$/);
      const audienceId = await createAudience(ws, "Announced");
      await receiver.waitFor(new RegExp(`^1 audience.created .*"audienceId":"${audienceId}"`));
      // A forged delivery is refused.
      const forged = await fetch(url, {
        method: "POST",
        headers: { "webhook-id": "evt_x", "webhook-timestamp": "1", "webhook-signature": "v1,AAAA" },
        body: "{}",
      });
      expect(forged.status).toBe(400);
    } finally {
      await receiver.stop();
    }
  });
});

// POST …/webhooks/{id}/recover: the failed deliveries since a time go out again, oldest first;
// /metrics shows each webhook's failed deliveries.

import type { AudienceClient } from "@audience-service/client";
import { describe, expect } from "vitest";
import { rejectionOf } from "../support/checked-client.ts";
import { createAudience } from "../support/factories.ts";
import { metricSample as sample } from "../support/metrics.ts";
import { startReceiver } from "./event-support.ts";
import { it } from "./webhook-fixture.ts";

const WEBHOOKS = "/v0/workspaces/{workspaceId}/webhooks";
const WEBHOOK = "/v0/workspaces/{workspaceId}/webhooks/{webhookId}";

/** How long a condition may take on a loaded machine: a bound on waiting, not a timing assertion. */
const PATIENT = { timeout: 20_000, interval: 25 };

const deliveries = (api: AudienceClient, workspaceId: string, webhookId: string) =>
  api.GET(`${WEBHOOK}/deliveries`, { params: { path: { workspaceId, webhookId } } }).then((page) => page.results);

describe("recovering a webhook's failed deliveries", () => {
  it("queues the failed deliveries since a time, sent oldest first; older ones stay failed", async ({
    api,
    workspaceId,
    ws,
    server,
  }) => {
    let up = false;
    const acknowledged: string[] = [];
    const receiver = await startReceiver((request) => {
      if (!up) return 500;
      acknowledged.push((JSON.parse(request.body) as { data: { name: string } }).data.name);
      return 204;
    });
    try {
      const webhook = await api.POST(WEBHOOKS, {
        params: { path: { workspaceId } },
        body: { url: receiver.url, types: ["audience.created"] },
      });
      const path = { workspaceId, webhookId: webhook.id };
      for (const name of ["Before", "Since 1", "Since 2", "Since 3"]) await createAudience(ws, name);
      // The fast schedule gives up after four attempts.
      await expect
        .poll(async () => (await deliveries(api, workspaceId, webhook.id)).map((d) => d.status), PATIENT)
        .toEqual(["failed", "failed", "failed", "failed"]);
      const failed = `audience_webhook_deliveries{webhook="${webhook.id}",state="failed"}`;
      expect(await sample(server.baseUrl, failed)).toBe(4);

      const log = (await deliveries(api, workspaceId, webhook.id)).sort((a, b) => a.sequence - b.sequence);
      const since = log[1]?.createdAt as string;
      up = true;
      expect(await api.POST(`${WEBHOOK}/recover`, { params: { path }, body: { since } })).toEqual({ queued: 3 });
      await expect.poll(() => acknowledged.length, PATIENT).toBeGreaterThanOrEqual(3);
      expect(acknowledged).toEqual(["Since 1", "Since 2", "Since 3"]);
      await expect
        .poll(async () => (await deliveries(api, workspaceId, webhook.id)).map((d) => [d.sequence, d.status]), PATIENT)
        .toEqual([
          [log[3]?.sequence, "succeeded"],
          [log[2]?.sequence, "succeeded"],
          [log[1]?.sequence, "succeeded"],
          [log[0]?.sequence, "failed"],
        ]);
      expect(await sample(server.baseUrl, failed)).toBe(1);

      // Nothing failed since then: nothing to queue.
      expect(await api.POST(`${WEBHOOK}/recover`, { params: { path }, body: { since } })).toEqual({ queued: 0 });
    } finally {
      await receiver.close();
    }
  });

  it("refuses an unknown webhook, a bad or future since, and a disabled webhook", async ({ api, workspaceId }) => {
    const webhook = await api.POST(WEBHOOKS, {
      params: { path: { workspaceId } },
      body: { url: "https://hooks.example.com/catch-up", enabled: false },
    });
    const path = { workspaceId, webhookId: webhook.id };
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const problems = await Promise.all([
      rejectionOf(
        api.POST(`${WEBHOOK}/recover`, { params: { path: { workspaceId, webhookId: "whk_nope" } }, body: { since } }),
      ),
      rejectionOf(api.POST(`${WEBHOOK}/recover`, { params: { path }, body: { since: "yesterday" } })),
      rejectionOf(api.POST(`${WEBHOOK}/recover`, { params: { path }, body: {} as never })),
      rejectionOf(
        api.POST(`${WEBHOOK}/recover`, {
          params: { path },
          body: { since: new Date(Date.now() + 3_600_000).toISOString() },
        }),
      ),
      rejectionOf(api.POST(`${WEBHOOK}/recover`, { params: { path }, body: { since } })),
    ]);
    expect(problems.map((p) => [p.status, p.code])).toEqual([
      [404, "webhook_not_found"],
      [400, "invalid_request"],
      [400, "invalid_request"],
      [400, "invalid_request"],
      [409, "webhook_disabled"],
    ]);
  });
});

// A receiver back after an outage gets its backlog at once and in sequence order, not at each
// delivery's next scheduled retry; /metrics shows each webhook's pending deliveries meanwhile.

import type { AudienceClient } from "@audience-service/client";
import { describe, expect } from "vitest";
import { createAudience } from "../support/factories.ts";
import { metricSample as sample } from "../support/metrics.ts";
import { startReceiver } from "./event-support.ts";
import { catchUpIt as it } from "./webhook-fixture.ts";

const WEBHOOKS = "/v0/workspaces/{workspaceId}/webhooks";
const DELIVERIES = "/v0/workspaces/{workspaceId}/webhooks/{webhookId}/deliveries";

/** How long a condition may take on a loaded machine: a bound on waiting, not a timing assertion. */
const PATIENT = { timeout: 20_000, interval: 25 };

const deliveries = (api: AudienceClient, workspaceId: string, webhookId: string) =>
  api.GET(DELIVERIES, { params: { path: { workspaceId, webhookId } } }).then((page) => page.results);

type Delivery = Awaited<ReturnType<typeof deliveries>>[number];

/**
 * A delivery whose second failure is recorded: its next retry is the 10-minute step. (Its
 * attempts are counted when claimed, so `attempts` alone would also match one still in flight,
 * which the receiver coming back would acknowledge first.)
 */
const atTheLongStep = (d: Delivery) =>
  d.status === "pending" && d.attempts >= 2 && Date.parse(d.nextAttemptAt ?? "") > Date.now() + 60_000;

describe("catching up after a receiver's outage", () => {
  it("sends the backlog once the receiver answers 2xx again, oldest first, before the next retry step", async ({
    api,
    workspaceId,
    ws,
    server,
  }) => {
    let up = false;
    // Which events the receiver acknowledged, in the order it acknowledged them.
    const acknowledged: number[] = [];
    const receiver = await startReceiver((request) => {
      if (!up) return 503;
      acknowledged.push((JSON.parse(request.body) as { sequence: number }).sequence);
      return 204;
    });
    try {
      const webhook = await api.POST(WEBHOOKS, {
        params: { path: { workspaceId } },
        body: { url: receiver.url, types: ["audience.created"] },
      });
      for (let i = 0; i < 5; i++) await createAudience(ws, `Missed ${i}`);

      // Every delivery failed twice (at once and 0.1 s later), and the second failure is recorded:
      // the next retry is 10 minutes away.
      await expect
        .poll(async () => {
          const log = await deliveries(api, workspaceId, webhook.id);
          return log.length === 5 && log.every(atTheLongStep);
        }, PATIENT)
        .toBe(true);
      const missed = (await deliveries(api, workspaceId, webhook.id)).map((d) => d.sequence).sort((a, b) => a - b);
      const pending = `audience_webhook_deliveries{webhook="${webhook.id}",state="pending"}`;
      expect(await sample(server.baseUrl, pending)).toBe(5);

      up = true;
      await expect.poll(() => acknowledged.length, PATIENT).toBeGreaterThanOrEqual(5);
      // The first success is the oldest delivery, tried ahead of its schedule while the receiver
      // was down; the rest follow it one at a time, in sequence order.
      expect(acknowledged).toEqual(missed);
      await expect
        .poll(async () => (await deliveries(api, workspaceId, webhook.id)).map((d) => d.status), PATIENT)
        .toEqual(["succeeded", "succeeded", "succeeded", "succeeded", "succeeded"]);
      expect(await sample(server.baseUrl, pending)).toBe(0);
      expect(
        (await api.GET(`${WEBHOOKS}/{webhookId}`, { params: { path: { workspaceId, webhookId: webhook.id } } }))
          .failingSince,
      ).toBeNull();
    } finally {
      await receiver.close();
    }
  });

  it("a new event's success brings the backlog after it, in sequence order", async ({ api, workspaceId, ws }) => {
    let up = false;
    const acknowledged: string[] = [];
    const receiver = await startReceiver((request) => {
      if (!up) return 503;
      acknowledged.push((JSON.parse(request.body) as { data: { name: string } }).data.name);
      return 204;
    });
    try {
      const webhook = await api.POST(WEBHOOKS, {
        params: { path: { workspaceId } },
        body: { url: receiver.url, types: ["audience.created"] },
      });
      for (let i = 0; i < 4; i++) await createAudience(ws, `Backlog ${i}`);
      await expect
        .poll(async () => {
          const log = await deliveries(api, workspaceId, webhook.id);
          return log.length === 4 && log.every(atTheLongStep);
        }, PATIENT)
        .toBe(true);

      up = true;
      await createAudience(ws, "After the outage");
      await expect.poll(() => acknowledged.length, PATIENT).toBeGreaterThanOrEqual(5);
      // Whichever came first (the new event, or the oldest delivery tried ahead of its schedule),
      // the backlog came after the first success and in its order.
      const backlog = acknowledged.filter((name) => name.startsWith("Backlog"));
      expect(backlog).toEqual(["Backlog 0", "Backlog 1", "Backlog 2", "Backlog 3"]);
      expect(acknowledged).toContain("After the outage");
      expect(acknowledged).toHaveLength(5);
    } finally {
      await receiver.close();
    }
  });
});

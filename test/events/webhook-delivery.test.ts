// Delivering events to receivers: signed, selected, retried on a schedule, given up, disabled.

import type { AudienceClient } from "@audience-service/client";
import { describe, expect } from "vitest";
import { createAudience } from "../support/factories.ts";
import { startReceiver, verifiedIndependently } from "./event-support.ts";
import { it } from "./webhook-fixture.ts";

const WEBHOOKS = "/v0/workspaces/{workspaceId}/webhooks";
const WEBHOOK = "/v0/workspaces/{workspaceId}/webhooks/{webhookId}";

const deliveries = (api: AudienceClient, workspaceId: string, webhookId: string) =>
  api.GET(`${WEBHOOK}/deliveries`, { params: { path: { workspaceId, webhookId } } }).then((page) => page.results);

describe("webhook delivery", () => {
  it("POSTs each selected event, signed, as the feed shows it", async ({ api, workspaceId, ws }) => {
    const receiver = await startReceiver();
    try {
      const selected = await createAudience(ws, "Selected");
      const webhook = await api.POST(WEBHOOKS, {
        params: { path: { workspaceId } },
        body: { url: receiver.url, types: ["audience.members_changed", "audience.renamed"], audienceIds: [selected] },
      });
      const other = await createAudience(ws, "Other");
      for (const audienceId of [other, selected]) {
        await api.POST("/v0/workspaces/{workspaceId}/audiences/{audienceId}/members", {
          params: { path: { workspaceId, audienceId } },
          body: { memberIds: ["ada"] },
        });
      }
      await receiver.waitFor(1);

      const feed = await api.GET("/v0/workspaces/{workspaceId}/events", { params: { path: { workspaceId } } });
      const expected = feed.results.filter(
        (e) => e.type === "audience.members_changed" && e.data.audienceId === selected,
      );
      expect(receiver.bodies()).toEqual(expected);
      const [request] = receiver.received;
      expect(request?.headers).toMatchObject({
        "content-type": "application/json",
        "webhook-id": expected[0]?.id,
        "webhook-timestamp": expect.stringMatching(/^\d{10}$/),
      });
      expect(verifiedIndependently(request as never, webhook.secret)).toBe(true);
      expect(Math.abs(Number(request?.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(300);
    } finally {
      await receiver.close();
    }
  });

  it("retries a failing receiver on the schedule until it answers 2xx", async ({ api, workspaceId, ws }) => {
    const receiver = await startReceiver((_request, index) => (index < 2 ? 503 : 204));
    try {
      const webhook = await api.POST(WEBHOOKS, { params: { path: { workspaceId } }, body: { url: receiver.url } });
      await createAudience(ws);
      await receiver.waitFor(3);
      expect(new Set(receiver.received.map((r) => r.headers["webhook-id"])).size).toBe(1);
      await expect.poll(async () => (await deliveries(api, workspaceId, webhook.id))[0]?.status).toBe("succeeded");
      expect((await deliveries(api, workspaceId, webhook.id))[0]).toMatchObject({
        attempts: 3,
        lastStatusCode: 204,
        lastError: null,
        nextAttemptAt: null,
      });
      expect(
        (await api.GET(WEBHOOK, { params: { path: { workspaceId, webhookId: webhook.id } } })).failingSince,
      ).toBeNull();
    } finally {
      await receiver.close();
    }
  });

  it("gives up after the last attempt; redirects and timeouts are failures", async ({ api, workspaceId, ws }) => {
    const elsewhere = await startReceiver();
    const receiver = await startReceiver(async (request) => {
      if (request.path === "/hook?slow") await new Promise((resolve) => setTimeout(resolve, 1_500));
      return request.path === "/hook?redirect" ? 307 : 500;
    });
    try {
      const urls = [receiver.url, `${receiver.url}?redirect`, `${receiver.url}?slow`];
      const hooks = [];
      for (const url of urls)
        hooks.push(await api.POST(WEBHOOKS, { params: { path: { workspaceId } }, body: { url } }));
      await createAudience(ws);
      for (const hook of hooks) {
        await expect
          .poll(async () => (await deliveries(api, workspaceId, hook.id))[0]?.status, { timeout: 20_000 })
          .toBe("failed");
      }
      const [failing, redirected, slow] = await Promise.all(hooks.map((h) => deliveries(api, workspaceId, h.id)));
      expect(failing?.[0]).toMatchObject({ attempts: 4, lastStatusCode: 500, nextAttemptAt: null });
      expect(redirected?.[0]).toMatchObject({ attempts: 4, lastStatusCode: 307 });
      expect(slow?.[0]).toMatchObject({ attempts: 4, lastStatusCode: null, lastError: "no answer within 1 s" });
      expect(elsewhere.received).toEqual([]);
      const webhook = await api.GET(WEBHOOK, { params: { path: { workspaceId, webhookId: hooks[0]?.id as string } } });
      expect(webhook).toMatchObject({ enabled: true, failingSince: expect.any(String) });
    } finally {
      await Promise.all([receiver.close(), elsewhere.close()]);
    }
  });

  it("is disabled at once by 410 Gone, and after a day of nothing but failures; enabling resumes", async ({
    api,
    workspaceId,
    ws,
    server,
  }) => {
    let gone = true;
    const receiver = await startReceiver(() => (gone ? 410 : 200));
    const failing = await startReceiver(() => 500);
    try {
      const webhook = await api.POST(WEBHOOKS, { params: { path: { workspaceId } }, body: { url: receiver.url } });
      const path = { workspaceId, webhookId: webhook.id };
      await createAudience(ws, "First");
      await expect.poll(async () => (await api.GET(WEBHOOK, { params: { path } })).disabledReason).toBe("gone");
      expect(receiver.received).toHaveLength(1);

      // Events published while it is disabled are not queued for it; enabling it delivers what
      // comes next. Publishing follows the write's answer, so wait until the feed shows the event.
      const whileDisabled = await createAudience(ws, "While disabled");
      await expect
        .poll(async () => {
          const feed = await api.GET("/v0/workspaces/{workspaceId}/events", { params: { path: { workspaceId } } });
          return feed.results.some((e) => e.type === "audience.created" && e.data.audienceId === whileDisabled);
        })
        .toBe(true);
      gone = false;
      await api.PATCH(WEBHOOK, { params: { path }, body: { enabled: true } });
      await createAudience(ws, "After");
      await receiver.waitFor(2);
      expect(receiver.bodies().map((b) => (b.data as { name: string }).name)).toEqual(["First", "After"]);

      // A webhook that has failed for more than a day is disabled by its next failure.
      const failingHook = await api.POST(WEBHOOKS, { params: { path: { workspaceId } }, body: { url: failing.url } });
      await server.store.db.$executeRaw`
        UPDATE webhooks SET failing_since = now() - interval '25 hours' WHERE id = ${failingHook.id}`;
      await createAudience(ws, "Last straw");
      await expect
        .poll(
          async () =>
            (await api.GET(WEBHOOK, { params: { path: { workspaceId, webhookId: failingHook.id } } })).disabledReason,
        )
        .toBe("failing");
    } finally {
      await Promise.all([receiver.close(), failing.close()]);
    }
  });
});

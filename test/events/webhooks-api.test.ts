// The webhook subscriptions API: settings, the secret shown once, rotation, tests, the log, retries.
import { describe, expect } from "vitest";
import { rejectionOf } from "../support/checked-client.ts";
import { createAudience } from "../support/factories.ts";
import { metricSample } from "../support/metrics.ts";
import { startReceiver, verifiedIndependently } from "./event-support.ts";
import { it } from "./webhook-fixture.ts";

const WEBHOOKS = "/v0/workspaces/{workspaceId}/webhooks";
const WEBHOOK = "/v0/workspaces/{workspaceId}/webhooks/{webhookId}";

describe("webhook subscriptions", () => {
  it("are created with a secret shown once, read back without it, changed and deleted", async ({
    api,
    workspaceId,
    ws,
  }) => {
    const audienceId = await createAudience(ws);
    const created = await api.POST(WEBHOOKS, {
      params: { path: { workspaceId } },
      body: { url: "https://hooks.example.com/in", types: ["audience.members_changed"], audienceIds: [audienceId] },
    });
    expect(created).toMatchObject({
      url: "https://hooks.example.com/in",
      types: ["audience.members_changed"],
      audienceIds: [audienceId],
      description: "",
      enabled: true,
      disabledReason: null,
      failingSince: null,
    });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const { secret: _secret, ...withoutSecret } = created;
    const path = { workspaceId, webhookId: created.id };
    expect(await api.GET(WEBHOOK, { params: { path } })).toEqual(withoutSecret);
    expect((await api.GET(WEBHOOKS, { params: { path: { workspaceId } } })).results).toEqual([withoutSecret]);

    expect(await api.PATCH(WEBHOOK, { params: { path }, body: { enabled: false, types: null } })).toMatchObject({
      enabled: false,
      disabledReason: "manual",
      types: null,
    });
    expect(await api.PATCH(WEBHOOK, { params: { path }, body: { enabled: true, description: "CRM" } })).toMatchObject({
      enabled: true,
      disabledReason: null,
      description: "CRM",
    });

    await api.DELETE(WEBHOOK, { params: { path } });
    const gone = await rejectionOf(api.GET(WEBHOOK, { params: { path } }));
    expect([gone.status, gone.code]).toEqual([404, "webhook_not_found"]);
  });

  it("refuse unknown and archived audiences, non-http URLs, and a 26th webhook", async ({ api, workspaceId, ws }) => {
    const archived = await createAudience(ws);
    await api.DELETE("/v0/workspaces/{workspaceId}/audiences/{audienceId}", {
      params: { path: { workspaceId, audienceId: archived } },
    });
    const create = (body: Parameters<typeof api.POST<typeof WEBHOOKS>>[1]["body"]) =>
      rejectionOf(api.POST(WEBHOOKS, { params: { path: { workspaceId } }, body }));
    const problems = [
      await create({ url: "https://hooks.example.com/", audienceIds: ["aud_nobody"] }),
      await create({ url: "https://hooks.example.com/", audienceIds: [archived] }),
      await create({ url: "ftp://hooks.example.com/" }),
      await create({ url: "https://hooks.example.com/", types: ["audience.exploded" as never] }),
      // Refused even where private receivers are allowed, as this server allows them.
      await create({ url: "http://hooks.example.com:99999/" }),
      await create({ url: "https://user:password@hooks.example.com/" }),
    ];
    expect(problems.map((p) => [p.status, p.code])).toEqual([
      [404, "audience_not_found"],
      [409, "audience_archived"],
      [400, "invalid_request"],
      [400, "invalid_request"],
      [400, "invalid_request"],
      [400, "webhook_url_not_allowed"],
    ]);
    const kept = await api.POST(WEBHOOKS, {
      params: { path: { workspaceId } },
      body: { url: "https://hooks.example.com/" },
    });
    const patched = await rejectionOf(
      api.PATCH(WEBHOOK, { params: { path: { workspaceId, webhookId: kept.id } }, body: { audienceIds: [archived] } }),
    );
    expect([patched.status, patched.code]).toEqual([409, "audience_archived"]);

    for (let i = 1; i < 25; i++) {
      await api.POST(WEBHOOKS, { params: { path: { workspaceId } }, body: { url: `https://hooks.example.com/${i}` } });
    }
    const tooMany = await create({ url: "https://hooks.example.com/26" });
    expect([tooMany.status, tooMany.code]).toEqual([400, "too_many_items"]);
  });

  it("send a test event, keep a log of deliveries, and deliver again on request", async ({ api, workspaceId }) => {
    const receiver = await startReceiver();
    try {
      const webhook = await api.POST(WEBHOOKS, { params: { path: { workspaceId } }, body: { url: receiver.url } });
      const path = { workspaceId, webhookId: webhook.id };
      const queued = await api.POST(`${WEBHOOK}/test`, { params: { path } });
      expect(queued).toMatchObject({ eventType: "webhook.test", sequence: 0, status: "pending", attempts: 0 });
      await receiver.waitFor(1);
      expect(receiver.bodies()).toEqual([
        {
          id: queued.eventId,
          type: "webhook.test",
          sequence: 0,
          createdAt: expect.any(String),
          data: { webhookId: webhook.id },
        },
      ]);
      expect(verifiedIndependently(receiver.received[0] as never, webhook.secret)).toBe(true);
      await expect
        .poll(async () => (await api.GET(`${WEBHOOK}/deliveries`, { params: { path } })).results[0]?.status)
        .toBe("succeeded");

      const again = await api.POST(`${WEBHOOK}/deliveries/{deliveryId}/retry`, {
        params: { path: { ...path, deliveryId: queued.id } },
      });
      expect(again).toMatchObject({ id: queued.id, status: "pending", nextAttemptAt: expect.any(String) });
      await receiver.waitFor(2);
      expect(receiver.received.map((r) => r.headers["webhook-id"])).toEqual([queued.eventId, queued.eventId]);
      // The receiver has the second attempt before the server has recorded its answer.
      const succeeded = async () =>
        (await api.GET(`${WEBHOOK}/deliveries`, { params: { path, query: { status: "succeeded" } } })).results.map(
          (d) => [d.id, d.attempts],
        );
      await expect.poll(succeeded).toEqual([[queued.id, 2]]);

      const missing = await rejectionOf(
        api.POST(`${WEBHOOK}/deliveries/{deliveryId}/retry`, { params: { path: { ...path, deliveryId: "dlv_nope" } } }),
      );
      expect([missing.status, missing.code]).toEqual([404, "delivery_not_found"]);
      await api.PATCH(WEBHOOK, { params: { path }, body: { enabled: false } });
      const disabled = await rejectionOf(
        api.POST(`${WEBHOOK}/deliveries/{deliveryId}/retry`, { params: { path: { ...path, deliveryId: queued.id } } }),
      );
      expect([disabled.status, disabled.code]).toEqual([409, "webhook_disabled"]);
    } finally {
      await receiver.close();
    }
  });

  it("sign with the old and the new secret for a day after a rotation", async ({ api, workspaceId }) => {
    const receiver = await startReceiver();
    try {
      const webhook = await api.POST(WEBHOOKS, { params: { path: { workspaceId } }, body: { url: receiver.url } });
      const path = { workspaceId, webhookId: webhook.id };
      const { secret } = await api.POST(`${WEBHOOK}/rotate-secret`, { params: { path } });
      expect(secret).not.toBe(webhook.secret);
      await api.POST(`${WEBHOOK}/test`, { params: { path } });
      await receiver.waitFor(1);
      const [request] = receiver.received;
      expect(String(request?.headers["webhook-signature"]).split(" ")).toHaveLength(2);
      expect(verifiedIndependently(request as never, secret)).toBe(true);
      expect(verifiedIndependently(request as never, webhook.secret)).toBe(true);
      expect(verifiedIndependently(request as never, "whsec_c29tZXRoaW5nIGVsc2UgZW50aXJlbHk=")).toBe(false);
    } finally {
      await receiver.close();
    }
  });

  it("are counted in /metrics: events published, attempts by outcome", async ({ api, workspaceId, ws, server }) => {
    const receiver = await startReceiver((_request, index) => (index === 0 ? 500 : 204));
    try {
      const [created, retried, succeeded] = await Promise.all([
        metricSample(server.baseUrl, 'audience_events_published_total{type="audience.created"}'),
        metricSample(server.baseUrl, 'audience_webhook_attempts_total{outcome="retry"}'),
        metricSample(server.baseUrl, 'audience_webhook_attempts_total{outcome="succeeded"}'),
      ]);
      await api.POST(WEBHOOKS, { params: { path: { workspaceId } }, body: { url: receiver.url } });
      await createAudience(ws);
      await receiver.waitFor(2);
      await expect
        .poll(() => metricSample(server.baseUrl, 'audience_webhook_attempts_total{outcome="succeeded"}'))
        .toBe(succeeded + 1);
      expect(await metricSample(server.baseUrl, 'audience_webhook_attempts_total{outcome="retry"}')).toBe(retried + 1);
      expect(await metricSample(server.baseUrl, 'audience_events_published_total{type="audience.created"}')).toBe(
        created + 1,
      );
    } finally {
      await receiver.close();
    }
  });
});

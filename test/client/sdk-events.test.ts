// The SDK for consumers of changes: following the feed, the webhooks API, verifying deliveries.

import { type EventOf, type FeedPage, verifyWebhook, WebhookVerificationError } from "@audience-service/client";
import { describe, expect } from "vitest";
import { startReceiver } from "../events/event-support.ts";
import { it } from "../events/webhook-fixture.ts";
import { notCalled, operationsTagged } from "../support/checked-client.ts";
import { addMembers, createAudience } from "../support/factories.ts";

const TAGS = ["Events", "Webhooks"];
const WEBHOOKS = "/v0/workspaces/{workspaceId}/webhooks";
const WEBHOOK = "/v0/workspaces/{workspaceId}/webhooks/{webhookId}";

describe("following the feed", () => {
  it("walks the feed from a cursor to its head, resumes from a page's cursor, and follows until aborted", async ({
    api,
    workspaceId,
    ws,
  }) => {
    const { cursor: start } = await api.GET("/v0/workspaces/{workspaceId}/events/latest", {
      params: { path: { workspaceId } },
    });
    const audienceId = await createAudience(ws, "Followed");
    await addMembers(ws, audienceId, { memberIds: ["ada", "bob"] });
    await expect
      .poll(async () => {
        const pages: FeedPage[] = [];
        for await (const page of api.feed({ workspaceId, after: start, follow: false, limit: 1 })) pages.push(page);
        return pages.flatMap((p) => p.events).length;
      })
      .toBe(3);

    const entered: string[] = [];
    let resumeAt = start;
    for await (const page of api.feed({
      workspaceId,
      after: start,
      follow: false,
      types: ["audience.members_changed"],
    })) {
      for (const event of page.events) {
        // The union narrows by type: entered is a list of member ids here.
        if (event.type === "audience.members_changed") entered.push(...event.data.entered);
      }
      resumeAt = page.cursor;
    }
    expect(entered).toEqual(["ada", "bob"]);

    // Following from where it stopped sees what comes next, then stops when aborted.
    const abort = new AbortController();
    const next: string[] = [];
    const following = (async () => {
      for await (const page of api.feed({ workspaceId, after: resumeAt, pollIntervalMs: 20, signal: abort.signal })) {
        for (const event of page.events) next.push(event.type);
        abort.abort();
      }
    })();
    await api.DELETE("/v0/workspaces/{workspaceId}/audiences/{audienceId}", {
      params: { path: { workspaceId, audienceId } },
    });
    await following;
    expect(next).toEqual(["audience.archived"]);
  });
});

describe("webhooks through the SDK", () => {
  it("creates, reads, changes, tests, retries and deletes a webhook whose deliveries verify", async ({
    api,
    workspaceId,
  }) => {
    const receiver = await startReceiver();
    try {
      const created = await api.POST(WEBHOOKS, {
        params: { path: { workspaceId } },
        body: { url: receiver.url, description: "SDK" },
      });
      const path = { workspaceId, webhookId: created.id };
      expect((await api.GET(WEBHOOKS, { params: { path: { workspaceId } } })).results.map((w) => w.id)).toEqual([
        created.id,
      ]);
      expect(await api.GET(WEBHOOK, { params: { path } })).toMatchObject({ description: "SDK", enabled: true });
      expect(await api.PATCH(WEBHOOK, { params: { path }, body: { types: ["audience.created"] } })).toMatchObject({
        types: ["audience.created"],
      });
      const test = await api.POST(`${WEBHOOK}/test`, { params: { path } });
      await receiver.waitFor(1);
      const [delivered] = receiver.received;
      const event = verifyWebhook(delivered?.body ?? "", delivered?.headers ?? {}, created.secret);
      expect(event).toMatchObject({ id: test.eventId, type: "webhook.test", data: { webhookId: created.id } });

      const { secret } = await api.POST(`${WEBHOOK}/rotate-secret`, { params: { path } });
      await api.POST(`${WEBHOOK}/deliveries/{deliveryId}/retry`, {
        params: { path: { ...path, deliveryId: test.id } },
      });
      await receiver.waitFor(2);
      const again = receiver.received[1];
      // Both secrets verify during the rotation; a tampered body, another secret or a stale timestamp do not.
      expect(verifyWebhook(again?.body ?? "", again?.headers ?? {}, secret).id).toBe(test.eventId);
      expect(verifyWebhook(again?.body ?? "", again?.headers ?? {}, [created.secret]).id).toBe(test.eventId);
      const refused = [
        () => verifyWebhook(`${again?.body} `, again?.headers ?? {}, secret),
        () => verifyWebhook(again?.body ?? "", again?.headers ?? {}, "whsec_c29tZXRoaW5nIGVsc2UgZW50aXJlbHk="),
        () => verifyWebhook(again?.body ?? "", { ...again?.headers, "webhook-timestamp": "1000000000" }, secret),
      ];
      for (const check of refused) expect(check).toThrow(WebhookVerificationError);

      const log = await api.GET(`${WEBHOOK}/deliveries`, { params: { path, query: { limit: 5 } } });
      expect(log.results.map((d) => d.id)).toEqual([test.id]);
      // Nothing failed: recovering queues nothing.
      const since = new Date(Date.now() - 3_600_000).toISOString();
      expect(await api.POST(`${WEBHOOK}/recover`, { params: { path }, body: { since } })).toEqual({ queued: 0 });
      await api.DELETE(WEBHOOK, { params: { path } });
    } finally {
      await receiver.close();
    }
  });

  it("types a delivered event by its type", () => {
    const typed = (event: EventOf<"members.updated">) => event.data.members.map((m) => m.changed.join(","));
    expect(
      typed({
        id: "evt_2Ld8Kq0Zs7Wm4Xn1Vb6c",
        type: "members.updated",
        sequence: 1,
        createdAt: "2026-11-23T10:00:00.000Z",
        data: { members: [{ id: "ada", changed: ["email", "fields.company"] }] },
      }),
    ).toEqual(["email,fields.company"]);
  });
});

describe("coverage", () => {
  it(`called every ${TAGS.join(", ")} operation through the SDK`, () => {
    const expected = operationsTagged(TAGS);
    expect(expected.length).toBeGreaterThan(5);
    expect(notCalled(expected)).toEqual([]);
  });
});

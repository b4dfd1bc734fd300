import { describe, expect } from "vitest";
import { it } from "../events/webhook-fixture.ts";
import { loadContract } from "../support/contract.ts";
import { createAudience } from "../support/factories.ts";
import { call, type RawResponse } from "../support/live-server.ts";

/**
 * The limits the contract states on a webhook's settings, each at the limit (accepted, and read
 * back as sent) and one past it (400 invalid_request pointing at the value), on create and on
 * update: a limit off by one either way, or checked on one operation only, fails here.
 * The fixture resolves hooks.example.com to a public address (no DNS from the test machine).
 */
/** Every event type, as the contract's EventType lists them. */
const EVENT_TYPES: string[] = loadContract().document.components.schemas.EventType.enum;
const BASE = "https://hooks.example.com/";
/** An https URL of exactly n characters. */
const urlOf = (n: number) => `${BASE}${"p".repeat(n - BASE.length)}`;

function expectRefused(response: RawResponse, pointer: string, what: string) {
  expect(response.status, what).toBe(400);
  expect(response.problem?.code, what).toBe("invalid_request");
  expect(
    response.problem?.errors?.map((e) => e.pointer),
    what,
  ).toContain(pointer);
}

describe("webhook limits stated by the contract, at the limit and one past it", () => {
  it("a URL of 2,048 characters, a description of 500, 100 audiences, every event type", async ({ server, ws }) => {
    const webhooks = `/v0/workspaces/${ws.id}/webhooks`;
    const audienceIds: string[] = [];
    for (let i = 0; i < 101; i++) audienceIds.push(await createAudience(ws, `Hooked ${i}`));
    const cases: [string, Record<string, unknown>, Record<string, unknown>, string][] = [
      ["the URL", { url: urlOf(2048) }, { url: urlOf(2049) }, "/body/url"],
      ["the description", { description: "d".repeat(500) }, { description: "d".repeat(501) }, "/body/description"],
      [
        "the audiences",
        { audienceIds: audienceIds.slice(0, 100) },
        { audienceIds: audienceIds.slice(0, 101) },
        "/body/audienceIds",
      ],
      // maxItems is 20, but the types are unique: every type is the most a webhook can name; a
      // list of twice every type and one more (which must repeat some) is refused.
      [
        "the types",
        { types: EVENT_TYPES },
        { types: [...EVENT_TYPES, ...EVENT_TYPES, "members.created"] },
        "/body/types",
      ],
    ];
    const kept = await call(server, "POST", webhooks, { token: ws.key, body: { url: BASE } });
    expect(kept.status).toBe(201);
    const keptUrl = `${webhooks}/${(kept.data as { id: string }).id}`;
    for (const [what, atLimit, past, pointer] of cases) {
      const created = await call(server, "POST", webhooks, { token: ws.key, body: { url: BASE, ...atLimit } });
      expect(created.status, `${what} at the limit, created`).toBe(201);
      expect(created.data, what).toMatchObject(atLimit);
      const read = await call(server, "GET", `${webhooks}/${(created.data as { id: string }).id}`, { token: ws.key });
      expect(read.data, `${what} read back`).toMatchObject(atLimit);
      const updated = await call(server, "PATCH", keptUrl, { token: ws.key, body: atLimit });
      expect(updated.status, `${what} at the limit, updated`).toBe(200);
      expect(updated.data, what).toMatchObject(atLimit);

      expectRefused(
        await call(server, "POST", webhooks, { token: ws.key, body: { url: BASE, ...past } }),
        pointer,
        `${what} past the limit, created`,
      );
      expectRefused(
        await call(server, "PATCH", keptUrl, { token: ws.key, body: past }),
        pointer,
        `${what} past the limit, updated`,
      );
    }
    // Nothing refused was written: the kept webhook holds the last values at the limit.
    const list = await call(server, "GET", webhooks, { token: ws.key });
    expect((list.data as { results: unknown[] }).results).toHaveLength(1 + cases.length);
    expect((await call(server, "GET", keptUrl, { token: ws.key })).data).toMatchObject({
      url: urlOf(2048),
      description: "d".repeat(500),
      audienceIds: audienceIds.slice(0, 100),
      types: EVENT_TYPES,
    });
  });

  it("a repeated event type or audience is refused, even under the limit", async ({ server, ws }) => {
    const audienceId = await createAudience(ws);
    const create = (body: Record<string, unknown>) =>
      call(server, "POST", `/v0/workspaces/${ws.id}/webhooks`, { token: ws.key, body: { url: BASE, ...body } });
    expectRefused(await create({ types: [...EVENT_TYPES, "members.created"] }), "/body/types", "a repeated type");
    expectRefused(await create({ audienceIds: [audienceId, audienceId] }), "/body/audienceIds", "a repeated audience");
  });
});

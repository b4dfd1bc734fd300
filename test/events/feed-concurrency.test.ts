// The feed's guarantee under concurrent writers: a consumer polling with `after` sees every
// committed event exactly once, in sequence order, and the sync recipe (take events/latest, copy
// the audience, apply entered/left after the cursor) converges to the audience exactly.

import type { AudienceClient, components } from "@audience-service/client";
import { describe, expect } from "vitest";
import { allMemberIds, createAudience } from "../support/factories.ts";
import { it } from "../support/fixture.ts";
import { readFeed } from "./event-support.ts";

type Event = components["schemas"]["Event"];

const WRITERS = 8;
const OPERATIONS_PER_WRITER = 25;
const IDS = Array.from({ length: 40 }, (_, i) => `p${i}`);

/** A small deterministic random sequence per writer, so a failure can be replayed. */
function randomOf(seed: number) {
  let state = seed;
  return (n: number) => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state % n;
  };
}

async function write(api: AudienceClient, workspaceId: string, audiences: string[], random: (n: number) => number) {
  const pick = <T>(xs: T[]) => xs[random(xs.length)] as T;
  const ids = () => Array.from({ length: 1 + random(4) }, () => pick(IDS));
  const audienceId = pick(audiences);
  const path = { workspaceId, audienceId };
  switch (random(5)) {
    case 0:
      return api.POST("/v0/workspaces/{workspaceId}/audiences/{audienceId}/members", {
        params: { path },
        body: { memberIds: ids() },
      });
    case 1:
      return api.DELETE("/v0/workspaces/{workspaceId}/audiences/{audienceId}/members", {
        params: { path },
        body: { memberIds: ids() },
      });
    case 2:
      return api.POST("/v0/workspaces/{workspaceId}/members", {
        params: { path: { workspaceId } },
        body: { members: ids().map((id) => ({ id, fields: { tier: pick(["gold", "silver"]) } })) },
      });
    case 3:
      return api.DELETE("/v0/workspaces/{workspaceId}/members", {
        params: { path: { workspaceId } },
        body: { memberIds: ids() },
      });
    default:
      return api.PATCH("/v0/workspaces/{workspaceId}/audiences/{audienceId}", {
        params: { path },
        body: { name: `Audience ${audienceId.slice(-4)} ${random(1000)}` },
      });
  }
}

describe("the event feed under concurrent writers", () => {
  it("gives a polling reader every event once, in order, and the sync recipe converges", async ({
    api,
    workspaceId,
    ws,
  }) => {
    const manual = await createAudience(ws, "Manual");
    const rule = await createAudience(ws, "Gold");
    await api.PUT("/v0/workspaces/{workspaceId}/audiences/{audienceId}/filter", {
      params: { path: { workspaceId, audienceId: rule } },
      body: { filter: { field: "fields.tier", op: "eq", value: "gold" } },
    });
    const audiences = [manual, rule];

    let writing = true;
    const writers = Array.from({ length: WRITERS }, async (_, w) => {
      const random = randomOf(w + 1);
      for (let i = 0; i < OPERATIONS_PER_WRITER; i++) await write(api, workspaceId, audiences, random);
    });

    // The sync recipe, started while the writers run.
    const start = (await api.GET("/v0/workspaces/{workspaceId}/events/latest", { params: { path: { workspaceId } } }))
      .cursor;
    const copies = new Map<string, Set<string>>();
    for (const audienceId of audiences) copies.set(audienceId, new Set(await allMemberIds(ws, audienceId)));

    // A reader polling the feed from that cursor as fast as it can.
    const seen: Event[] = [];
    let cursor = start;
    const poll = async () => {
      const page = await api.GET("/v0/workspaces/{workspaceId}/events", {
        params: { path: { workspaceId }, query: { after: cursor, limit: 50 } },
      });
      seen.push(...page.results);
      cursor = page.pageInfo.endCursor;
      return page.pageInfo.hasNextPage;
    };
    const reader = (async () => {
      while (writing) await poll();
    })();
    await Promise.all(writers);
    writing = false;
    await reader;
    // A write after every writer has answered: its events are recorded after theirs, so once the
    // reader has seen them, it has seen everything the writers did.
    const marker = await createAudience(ws, "Marker");
    const sawMarker = () => seen.some((event) => event.type === "audience.created" && event.data.audienceId === marker);
    await expect
      .poll(
        async () => {
          while (await poll());
          return sawMarker();
        },
        { timeout: 30_000, interval: 25 },
      )
      .toBe(true);

    // Exactly once, in order, with no gaps: the same as reading the feed afterwards.
    const sequences = seen.map((event) => event.sequence);
    // Many operations change nothing (removing a non-member, say); most change something.
    expect(sequences.length).toBeGreaterThan((WRITERS * OPERATIONS_PER_WRITER) / 2);
    expect(seen.filter((event) => event.type === "audience.members_changed").length).toBeGreaterThan(20);
    expect(sequences).toEqual(sequences.map((_, i) => (sequences[0] as number) + i));
    expect(seen).toEqual(await readFeed(api, workspaceId, start));

    for (const event of seen) {
      if (event.type !== "audience.members_changed") continue;
      const copy = copies.get(event.data.audienceId);
      for (const id of event.data.entered) copy?.add(id);
      for (const id of event.data.left) copy?.delete(id);
    }
    for (const audienceId of audiences) {
      expect([...(copies.get(audienceId) ?? [])].sort(), audienceId).toEqual(
        (await allMemberIds(ws, audienceId)).sort(),
      );
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFeed } from "../events/event-support.ts";
import {
  allMemberIds,
  createAudience,
  createWorkspace,
  type TestWorkspace,
  upsertMembers,
} from "../support/factories.ts";
import { type LiveServer, startLiveServer } from "../support/live-server.ts";

// Relative-time rules follow the clock on a server whose clock ticks every second
// (TIME_RULES_INTERVAL_SECONDS=1): members leave a withinLast window as time passes, with
// events of reason time, and the audiences that name it follow (reason dependency); activities
// age out of (and into) activity conditions' windows the same way.
const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";

describe("relative-time rules on a live server", () => {
  let server: LiveServer;
  beforeAll(async () => {
    server = await startLiveServer({ settings: { rules: { timeIntervalSeconds: 1 } } });
  });
  afterAll(() => server.close());

  const setFilter = (ws: TestWorkspace, audienceId: string, filter: unknown) =>
    ws.api.PUT(`${AUDIENCE}/filter`, {
      params: { path: { workspaceId: ws.id, audienceId } },
      body: { filter: filter as never },
    });

  it("let members leave as their dates age past the window, and those following it too", async () => {
    const ws = await createWorkspace(server);
    await ws.api.PUT("/v0/workspaces/{workspaceId}/fields/{fieldKey}", {
      params: { path: { workspaceId: ws.id, fieldKey: "lastOrder" } },
      body: { type: "date" },
    });
    const now = Date.now();
    await upsertMembers(ws, [
      { id: "ada", fields: { lastOrder: new Date(now).toISOString() } },
      { id: "bob", fields: { lastOrder: new Date(now - 3_600_000).toISOString() } },
    ]);
    const recent = await createAudience(ws, "Ordered in the last 3 seconds");
    const follower = await createAudience(ws, "Follows it");
    expect(
      (await setFilter(ws, recent, { field: "fields.lastOrder", op: "withinLast", value: "PT3S" })).memberCount,
    ).toBe(1);
    await setFilter(ws, follower, { field: "audience", op: "in", value: recent });
    expect(await allMemberIds(ws, follower)).toEqual(["ada"]);

    // Within the window plus a tick or two, ada ages out of both.
    await expect.poll(() => allMemberIds(ws, recent), { timeout: 15_000, interval: 200 }).toEqual([]);
    await expect.poll(() => allMemberIds(ws, follower), { timeout: 5_000, interval: 100 }).toEqual([]);
    const changes = async () =>
      (await readFeed(ws.api, ws.id)).flatMap((event) =>
        event.type === "audience.members_changed" &&
        (event.data.reason === "time" || event.data.reason === "dependency")
          ? [{ audienceId: event.data.audienceId, reason: event.data.reason, left: event.data.left }]
          : [],
      );
    await expect.poll(changes, { timeout: 10_000, interval: 100 }).toEqual([
      { audienceId: recent, reason: "time", left: ["ada"] },
      { audienceId: follower, reason: "dependency", left: ["ada"] },
    ]);
  });

  it("let members leave an activity window as their activities age out, and enter one as theirs age in", async () => {
    const ws = await createWorkspace(server);
    const recent = await createAudience(ws, "Ordered in the last 3 seconds");
    const lapsed = await createAudience(ws, "Ordered, but not in the last 2 seconds");
    await setFilter(ws, recent, { activity: "order.placed", withinLast: "PT3S" });
    await setFilter(ws, lapsed, { activity: "order.placed", notWithinLast: "PT2S" });
    await ws.api.POST("/v0/workspaces/{workspaceId}/activities", {
      params: { path: { workspaceId: ws.id } },
      body: { activities: [{ memberId: "ada", type: "order.placed" }] },
    });
    expect(await allMemberIds(ws, recent)).toEqual(["ada"]);
    expect(await allMemberIds(ws, lapsed)).toEqual([]);
    await expect.poll(() => allMemberIds(ws, lapsed), { timeout: 15_000, interval: 200 }).toEqual(["ada"]);
    await expect.poll(() => allMemberIds(ws, recent), { timeout: 15_000, interval: 200 }).toEqual([]);
    const changes = async () =>
      (await readFeed(ws.api, ws.id)).flatMap((event) =>
        event.type === "audience.members_changed"
          ? [
              {
                audienceId: event.data.audienceId,
                reason: event.data.reason,
                entered: event.data.entered,
                left: event.data.left,
              },
            ]
          : [],
      );
    await expect.poll(changes, { timeout: 10_000, interval: 100 }).toEqual([
      { audienceId: recent, reason: "activity", entered: ["ada"], left: [] },
      { audienceId: lapsed, reason: "time", entered: ["ada"], left: [] },
      { audienceId: recent, reason: "time", entered: [], left: ["ada"] },
    ]);
  });

  it("let new members leave a createdAt window", async () => {
    const ws = await createWorkspace(server);
    await upsertMembers(ws, [{ id: "newcomer" }]);
    const fresh = await createAudience(ws, "Created in the last 5 seconds");
    const set = await setFilter(ws, fresh, { field: "createdAt", op: "withinLast", value: "PT5S" });
    expect(set.memberCount).toBe(1);
    await expect.poll(() => allMemberIds(ws, fresh), { timeout: 15_000, interval: 200 }).toEqual([]);
  });
});

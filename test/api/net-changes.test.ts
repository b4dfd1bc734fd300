import { describe, expect } from "vitest";
import { membershipChanges, readFeed } from "../events/event-support.ts";
import { addMembers, createAudience, type TestWorkspace, upsertMembers } from "../support/factories.ts";
import { it } from "../support/fixture.ts";

// One request publishes, per audience, only what its commit changed; and an audience's updatedAt
// moves whenever its members change, also when as many enter as leave.

const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";

const at = (ws: TestWorkspace, audienceId: string) => ({ params: { path: { workspaceId: ws.id, audienceId } } });

/** The feed once the events of every write so far are out: a marker audience is made last. */
async function settled(ws: TestWorkspace) {
  const marker = await createAudience(ws, "Marker");
  const published = async () =>
    (await readFeed(ws.api, ws.id)).some((e) => e.type === "audience.created" && e.data.audienceId === marker);
  await expect.poll(published, { timeout: 20_000, interval: 25 }).toBe(true);
  return membershipChanges(await readFeed(ws.api, ws.id));
}

describe("membership events of one request", () => {
  it("tell only the net change: a member the request moved in and out again is not in them", async ({ ws }) => {
    const beta = await createAudience(ws, "Beta");
    const pro = await createAudience(ws, "Pro");
    const betaNotPro = await createAudience(ws, "Beta but not Pro");
    await ws.api.PUT(`${AUDIENCE}/filter`, {
      ...at(ws, pro),
      body: { filter: { field: "fields.plan", op: "eq", value: "pro" } },
    });
    await ws.api.PUT(`${AUDIENCE}/filter`, {
      ...at(ws, betaNotPro),
      body: {
        filter: {
          all: [
            { field: "audience", op: "in", value: beta },
            { field: "audience", op: "notIn", value: pro },
          ],
        },
      },
    });
    // Added to Beta with data that puts them in Pro: they are never in "Beta but not Pro".
    await addMembers(ws, beta, {
      members: [
        { id: "x", fields: { plan: "pro" } },
        { id: "y", fields: { plan: "pro" } },
      ],
    });
    // One who stays on the free plan does enter it.
    await addMembers(ws, beta, { members: [{ id: "z", fields: { plan: "free" } }] });

    expect(await settled(ws)).toEqual([
      { audienceId: beta, reason: "manual", entered: ["x", "y"], left: [] },
      { audienceId: pro, reason: "member_changed", entered: ["x", "y"], left: [] },
      { audienceId: beta, reason: "manual", entered: ["z"], left: [] },
      { audienceId: betaNotPro, reason: "dependency", entered: ["z"], left: [] },
    ]);
    const history = await ws.api.GET(`${AUDIENCE}/history`, {
      ...at(ws, betaNotPro),
      params: { ...at(ws, betaNotPro).params, query: {} },
    });
    expect(history.results.map(({ memberCount, entered, left }) => ({ memberCount, entered, left }))).toEqual([
      { memberCount: 1, entered: 1, left: 0 },
    ]);
  });

  it("move updatedAt when one member enters as another leaves", async ({ ws }) => {
    const pro = await createAudience(ws, "Pro");
    await upsertMembers(ws, [
      { id: "a", fields: { plan: "pro" } },
      { id: "b", fields: { plan: "free" } },
    ]);
    await ws.api.PUT(`${AUDIENCE}/filter`, {
      ...at(ws, pro),
      body: { filter: { field: "fields.plan", op: "eq", value: "pro" } },
    });
    const stats = () => ws.api.GET(AUDIENCE, { params: { ...at(ws, pro).params, query: { include: "stats" } } });
    const before = await stats();
    // A millisecond later than the last change, so that a new updatedAt can differ from it.
    await expect.poll(() => Date.now(), { interval: 1 }).toBeGreaterThan(Date.parse(before.updatedAt ?? ""));
    const swapped = Date.now();
    await upsertMembers(ws, [
      { id: "a", fields: { plan: "free" } },
      { id: "b", fields: { plan: "pro" } },
    ]);
    const after = await stats();
    expect(after.memberCount).toBe(1);
    expect(before.memberCount).toBe(1);
    expect(Date.parse(after.updatedAt ?? "")).toBeGreaterThanOrEqual(swapped);
  });
});

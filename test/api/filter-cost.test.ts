// The cost bound of filters (FILTER_COST_BUDGET), on a server whose budget is small enough that a
// workspace of three members meets it: every operation that evaluates a client's filter over the
// workspace refuses one that costs more, before running it, and says which conditions cost most.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Filter } from "../../src/features/membership/rules/filter.ts";
import { rejectionOf } from "../support/checked-client.ts";
import { createAudience, createWorkspace, type TestWorkspace, upsertMembers } from "../support/factories.ts";
import { type LiveServer, startLiveServer } from "../support/live-server.ts";

/**
 * 3 members × 10 simple conditions × 1.25 (nodeCounts) = 37.5 is within it; 3 members × the 123
 * per member of `costly` × 0.6 (a dry run or a rule, the cheapest work) = 222 is not.
 */
const BUDGET = 200;
const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";

const simple = (i: number): Filter => ({ field: "fields.plan", op: "eq", value: `plan${i}` });
const ordinary: Filter = { any: Array.from({ length: 10 }, (_, i) => simple(i)) };
/** 100 conditions: simple ones but for a long anyEmail contains at 10 and 100 values at 50. */
const costly: Filter = {
  any: Array.from({ length: 100 }, (_, i): Filter => {
    if (i === 10) return { field: "anyEmail", op: "contains", value: "x".repeat(1_024) };
    if (i === 50) return { field: "fields.plan", op: "in", value: Array.from({ length: 100 }, (_, v) => `p${v}`) };
    return simple(i);
  }),
};

let server: LiveServer;
let ws: TestWorkspace;
let audienceId: string;
beforeAll(async () => {
  server = await startLiveServer({ settings: { rules: { costBudget: BUDGET } } });
  ws = await createWorkspace(server);
  await upsertMembers(ws, [
    { id: "m1", fields: { plan: "plan1" } },
    { id: "m2", fields: { plan: "plan2" } },
    { id: "m3", email: "three@example.com" },
  ]);
  audienceId = await createAudience(ws);
});
afterAll(() => server?.close());

const preview = (filter: Filter, nodeCounts?: boolean) =>
  ws.api.POST("/v0/workspaces/{workspaceId}/audiences/preview", {
    params: { path: { workspaceId: ws.id } },
    body: { filter, limit: 10, ...(nodeCounts === undefined ? {} : { nodeCounts }) },
  });
const path = () => ({ params: { path: { workspaceId: ws.id, audienceId } } });

/** The refusal: its code, the conditions it names, and that its detail gives the cost and the limit. */
async function refusal(promise: Promise<unknown>) {
  const error = await rejectionOf(promise);
  expect(error.status).toBe(400);
  expect(error.code).toBe("filter_too_costly");
  expect(error.problem?.detail).toContain("3 members");
  expect(error.problem?.detail).toContain(`more than the ${BUDGET}`);
  return error.problem?.errors?.map((e) => e.pointer);
}

describe("a filter too costly for the workspace", () => {
  it("is refused by a preview, with and without nodeCounts, naming the costliest conditions", async () => {
    expect(await refusal(preview(costly))).toEqual([
      "/body/filter/any/10",
      "/body/filter/any/50",
      "/body/filter/any/0",
    ]);
    expect(await refusal(preview(costly, true))).toEqual([
      "/body/filter/any/10",
      "/body/filter/any/50",
      "/body/filter/any/0",
    ]);
  });

  it("is refused by the dry run and by setAudienceFilter, which leaves the rule as it was", async () => {
    await refusal(ws.api.POST(`${AUDIENCE}/filter/preview`, { ...path(), body: { filter: costly } }));
    await refusal(ws.api.PUT(`${AUDIENCE}/filter`, { ...path(), body: { filter: costly } }));
    expect(await ws.api.GET(`${AUDIENCE}/filter`, path())).toEqual({ filter: null, memberCount: 0 });
  });

  it("leaves ordinary filters alone: previewed, counted per node, dry-run and saved", async () => {
    expect((await preview(ordinary)).totalCount).toBe(2);
    expect((await preview(ordinary, true)).nodes?.[0]).toEqual({ pointer: "", count: 2 });
    expect(
      (await ws.api.POST(`${AUDIENCE}/filter/preview`, { ...path(), body: { filter: ordinary } })).memberCount,
    ).toBe(2);
    expect(await ws.api.PUT(`${AUDIENCE}/filter`, { ...path(), body: { filter: ordinary } })).toEqual({
      filter: ordinary,
      memberCount: 2,
    });
  });
});

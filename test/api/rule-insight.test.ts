// previewAudienceFilterChange, previewAudience's nodeCounts and explainMembership over a workspace
// built so that every count is known:
//   m01 score 5   plan pro                    A: added by hand
//   m02 score 50  plan pro
//   m03 score 70  plan free  in VIP by hand    A: by its rule (score > 60)
//   m04 score 90  plan free                    A: matched, removed by hand
//   m05 no score  plan pro   in VIP by hand    e-mail five@acme.com
//   m06 score 100 plan pro                     A: by its rule
// A's rule is score > 60 (a number: "100" > "60" although not as text), so A = {m01, m03, m06}.
import { describe, expect } from "vitest";
import type { Filter } from "../../src/features/membership/rules/filter.ts";
import { rejectionOf } from "../support/checked-client.ts";
import { addMembers, createAudience, type TestWorkspace, upsertMembers } from "../support/factories.ts";
import { it } from "../support/fixture.ts";

const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";
const scoreAbove60: Filter = { field: "fields.score", op: "gt", value: "60" };
const inA = (id: string): Filter => ({ field: "audience", op: "in", value: id });

const setFilter = (ws: TestWorkspace, audienceId: string, filter: Filter | null) =>
  ws.api.PUT(`${AUDIENCE}/filter`, { params: { path: { workspaceId: ws.id, audienceId } }, body: { filter } });
const dryRun = (ws: TestWorkspace, audienceId: string, filter: Filter | null) =>
  ws.api.POST(`${AUDIENCE}/filter/preview`, { params: { path: { workspaceId: ws.id, audienceId } }, body: { filter } });
const explain = (ws: TestWorkspace, audienceId: string, memberId: string) =>
  ws.api.GET(`${AUDIENCE}/members/{memberId}/explanation`, {
    params: { path: { workspaceId: ws.id, audienceId, memberId } },
  });

async function buildWorkspace(ws: TestWorkspace) {
  await ws.api.PUT("/v0/workspaces/{workspaceId}/fields/{fieldKey}", {
    params: { path: { workspaceId: ws.id, fieldKey: "score" } },
    body: { type: "number" },
  });
  await upsertMembers(ws, [
    { id: "m01", fields: { score: "5", plan: "pro" } },
    { id: "m02", fields: { score: "50", plan: "pro" } },
    { id: "m03", fields: { score: "70", plan: "free" } },
    { id: "m04", fields: { score: "90", plan: "free" } },
    { id: "m05", email: "five@acme.com", fields: { plan: "Pro" } },
    { id: "m06", fields: { score: "100", plan: "pro" } },
  ]);
  const vip = await createAudience(ws);
  await addMembers(ws, vip, { memberIds: ["m03", "m05"] });
  const a = await createAudience(ws);
  await setFilter(ws, a, scoreAbove60);
  await addMembers(ws, a, { memberIds: ["m01"] });
  await ws.api.DELETE(`${AUDIENCE}/members`, {
    params: { path: { workspaceId: ws.id, audienceId: a } },
    body: { memberIds: ["m04"] },
  });
  return { vip, a };
}

describe("previewAudienceFilterChange", () => {
  it("counts the size after the change and who enters and leaves, keeping hand decisions", async ({ ws }) => {
    const { vip, a } = await buildWorkspace(ws);
    // score ≥ 50 or in VIP: m02 m03 m04 m05 m06 match; m04 stays out by hand, m01 stays in by hand.
    const wider: Filter = { any: [{ field: "fields.score", op: "gte", value: "50" }, inA(vip)] };
    expect(await dryRun(ws, a, wider)).toEqual({
      memberCount: 5,
      entering: { count: 2, sample: ["m02", "m05"] },
      leaving: { count: 0, sample: [] },
    });
    // pro and not score > 60: m01 m02 m05.
    const narrower: Filter = { all: [{ field: "fields.plan", op: "eq", value: "PRO" }, { not: scoreAbove60 }] };
    expect(await dryRun(ws, a, narrower)).toEqual({
      memberCount: 3,
      entering: { count: 2, sample: ["m02", "m05"] },
      leaving: { count: 2, sample: ["m03", "m06"] },
    });
    // No rule: only the member added by hand.
    expect(await dryRun(ws, a, null)).toEqual({
      memberCount: 1,
      entering: { count: 0, sample: [] },
      leaving: { count: 2, sample: ["m03", "m06"] },
    });
    // Nothing was saved.
    expect(await ws.api.GET(`${AUDIENCE}/filter`, { params: { path: { workspaceId: ws.id, audienceId: a } } })).toEqual(
      { filter: scoreAbove60, memberCount: 3 },
    );
  });

  it("with include=member, names the sampled members by e-mail in the order of the sample", async ({ ws }) => {
    const { a } = await buildWorkspace(ws);
    const narrower: Filter = { all: [{ field: "fields.plan", op: "eq", value: "PRO" }, { not: scoreAbove60 }] };
    const answer = await ws.api.POST(`${AUDIENCE}/filter/preview`, {
      params: { path: { workspaceId: ws.id, audienceId: a }, query: { include: "member" } },
      body: { filter: narrower },
    });
    expect(answer).toEqual({
      memberCount: 3,
      entering: {
        count: 2,
        sample: ["m02", "m05"],
        members: [
          { id: "m02", email: null },
          { id: "m05", email: "five@acme.com" },
        ],
      },
      leaving: {
        count: 2,
        sample: ["m03", "m06"],
        members: [
          { id: "m03", email: null },
          { id: "m06", email: null },
        ],
      },
    });
  });

  it("names the first 10 by member number and counts all of them", async ({ ws }) => {
    const ids = Array.from({ length: 12 }, (_, i) => `n${String(i + 1).padStart(2, "0")}`);
    await upsertMembers(
      ws,
      ids.map((id) => ({ id, fields: { team: "x" } })),
    );
    const a = await createAudience(ws);
    expect(await dryRun(ws, a, { field: "fields.team", op: "eq", value: "x" })).toEqual({
      memberCount: 12,
      entering: { count: 12, sample: ids.slice(0, 10) },
      leaving: { count: 0, sample: [] },
    });
  });

  it("refuses what saving would refuse: unknown, archived, bad filters, cycles", async ({ ws }) => {
    const { vip, a } = await buildWorkspace(ws);
    expect(await rejectionOf(dryRun(ws, "aud_missing", scoreAbove60))).toMatchObject({
      status: 404,
      code: "audience_not_found",
    });
    const archived = await createAudience(ws, "Old list");
    await ws.api.DELETE(AUDIENCE, { params: { path: { workspaceId: ws.id, audienceId: archived } } });
    // The detail names the audience as a person knows it, and as a program does.
    expect((await rejectionOf(dryRun(ws, archived, scoreAbove60))).problem).toMatchObject({
      status: 409,
      code: "audience_archived",
      detail: `Audience "Old list" (${archived}) is archived and cannot be changed; restore it first.`,
    });
    expect((await rejectionOf(dryRun(ws, a, inA(archived)))).problem).toMatchObject({
      status: 409,
      code: "audience_archived",
    });
    expect(
      (await rejectionOf(dryRun(ws, a, { field: "fields.score", op: "contains", value: "5" }))).problem,
    ).toMatchObject({ status: 400, code: "invalid_filter", errors: [{ pointer: "/body/filter/op" }] });
    expect((await rejectionOf(dryRun(ws, a, { not: inA("aud_missing") }))).problem).toMatchObject({
      status: 400,
      code: "invalid_filter",
      errors: [{ pointer: "/body/filter/not/value", message: "names no audience of this workspace" }],
    });
    const follower = await createAudience(ws, "Followers");
    await setFilter(ws, follower, inA(a));
    expect((await rejectionOf(dryRun(ws, a, { any: [inA(vip), inA(follower)] }))).problem).toMatchObject({
      status: 400,
      code: "filter_cycle",
      detail: `The filter names audience "Followers" (${follower}), whose rule leads back to this audience.`,
      errors: [{ pointer: "/body/filter/any/1/value", message: "leads back to this audience" }],
    });
  });
});

describe("previewAudience with nodeCounts", () => {
  it("counts the members every node of a nested filter matches, in document order", async ({ ws }) => {
    const { vip } = await buildWorkspace(ws);
    const filter: Filter = {
      all: [{ field: "fields.plan", op: "eq", value: "pro" }, { not: { any: [scoreAbove60, inA(vip)] } }],
    };
    const path = { workspaceId: ws.id };
    const answer = await ws.api.POST("/v0/workspaces/{workspaceId}/audiences/preview", {
      params: { path },
      body: { filter, limit: 30, nodeCounts: true },
    });
    expect(answer.totalCount).toBe(2);
    expect(answer.results.map((m) => m.id).sort()).toEqual(["m01", "m02"]);
    expect(answer.nodes).toEqual([
      { pointer: "", count: 2 },
      { pointer: "/all/0", count: 4 },
      { pointer: "/all/1", count: 2 },
      { pointer: "/all/1/not", count: 4 },
      { pointer: "/all/1/not/any/0", count: 3 },
      { pointer: "/all/1/not/any/1", count: 2 },
    ]);
    const plain = await ws.api.POST("/v0/workspaces/{workspaceId}/audiences/preview", {
      params: { path },
      body: { filter, limit: 30 },
    });
    expect(plain.totalCount).toBe(2);
    expect("nodes" in plain).toBe(false);
    const withinDay = await ws.api.POST("/v0/workspaces/{workspaceId}/audiences/preview", {
      params: { path },
      body: { filter: { field: "createdAt", op: "withinLast", value: "P1D" }, limit: 1, nodeCounts: true },
    });
    expect(withinDay.nodes).toEqual([{ pointer: "", count: 6 }]);
    // Seventy conditions, all counted in the one pass: the last is the only one that matches.
    const many: Filter = {
      any: [
        ...Array.from({ length: 69 }, (_, i): Filter => ({ field: "id", op: "eq", value: `nobody${i}` })),
        { field: "fields.plan", op: "eq", value: "pro" },
      ],
    };
    const counted = await ws.api.POST("/v0/workspaces/{workspaceId}/audiences/preview", {
      params: { path },
      body: { filter: many, limit: 1, nodeCounts: true },
    });
    expect(counted.totalCount).toBe(4);
    expect(counted.nodes?.map((n) => n.count)).toEqual([4, ...Array(69).fill(0), 4]);
    expect(counted.nodes?.at(-1)).toEqual({ pointer: "/any/69", count: 4 });
  });
});

describe("explainMembership", () => {
  it("tells members in by hand, by rule, removed by hand and not matching apart", async ({ ws }) => {
    const { a } = await buildWorkspace(ws);
    const node = (matches: boolean, value: string | null) => ({
      matches,
      nodes: [{ pointer: "", matches, value }],
    });
    expect(await explain(ws, a, "m01")).toEqual({
      isMember: true,
      reason: "manual",
      manual: "include",
      rule: node(false, "5"),
    });
    expect(await explain(ws, a, "m03")).toEqual({
      isMember: true,
      reason: "rule",
      manual: null,
      rule: node(true, "70"),
    });
    expect(await explain(ws, a, "m04")).toEqual({
      isMember: false,
      reason: null,
      manual: "exclude",
      rule: node(true, "90"),
    });
    expect(await explain(ws, a, "m02")).toEqual({
      isMember: false,
      reason: null,
      manual: null,
      rule: node(false, "50"),
    });
    expect(await explain(ws, a, "m05")).toEqual({
      isMember: false,
      reason: null,
      manual: null,
      rule: node(false, null),
    });
  });

  it("reads audience conditions, e-mail lists and creation times node by node", async ({ ws }) => {
    const { vip } = await buildWorkspace(ws);
    const g = await createAudience(ws);
    await setFilter(ws, g, {
      all: [
        { any: [inA(vip), { field: "anyEmail", op: "endsWith", value: "@ACME.com" }] },
        { field: "createdAt", op: "withinLast", value: "P1D" },
      ],
    });
    const createdAt = async (memberId: string) =>
      (
        await ws.api.GET("/v0/workspaces/{workspaceId}/members/{memberId}", {
          params: { path: { workspaceId: ws.id, memberId } },
        })
      ).createdAt;
    expect(await explain(ws, g, "m05")).toEqual({
      isMember: true,
      reason: "rule",
      manual: null,
      rule: {
        matches: true,
        nodes: [
          { pointer: "", matches: true, value: null },
          { pointer: "/all/0", matches: true, value: null },
          { pointer: "/all/0/any/0", matches: true, value: true },
          { pointer: "/all/0/any/1", matches: true, value: ["five@acme.com"] },
          { pointer: "/all/1", matches: true, value: await createdAt("m05") },
        ],
      },
    });
    expect((await explain(ws, g, "m02")).rule?.nodes).toEqual([
      { pointer: "", matches: false, value: null },
      { pointer: "/all/0", matches: false, value: null },
      { pointer: "/all/0/any/0", matches: false, value: false },
      { pointer: "/all/0/any/1", matches: false, value: null },
      { pointer: "/all/1", matches: true, value: await createdAt("m02") },
    ]);
    // An audience without a rule: members are there by hand only.
    expect(await explain(ws, vip, "m03")).toEqual({ isMember: true, reason: "manual", manual: "include", rule: null });
  });

  it("answers 404 for an unknown audience or member", async ({ ws }) => {
    const { a } = await buildWorkspace(ws);
    expect(await rejectionOf(explain(ws, "aud_missing", "m01"))).toMatchObject({
      status: 404,
      code: "audience_not_found",
    });
    expect(await rejectionOf(explain(ws, a, "nobody"))).toMatchObject({ status: 404, code: "member_not_found" });
  });
});

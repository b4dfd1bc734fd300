// explainDraftMembership: a member explained against a rule not saved yet (the dry run's samples),
// with the audience's decisions by hand kept as saving would keep them. The workspace:
//   m01 score 5   plan pro    A: added by hand
//   m02 score 50  plan pro    in VIP by hand
//   m03 score 70  plan free   A: by its rule (score > 60)
//   m04 score 90  plan pro    A: matched, removed by hand
import { describe, expect } from "vitest";
import type { Filter } from "../../src/features/membership/rules/filter.ts";
import { rejectionOf } from "../support/checked-client.ts";
import { addMembers, createAudience, type TestWorkspace, upsertMembers } from "../support/factories.ts";
import { it } from "../support/fixture.ts";

const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";

const explainDraft = (ws: TestWorkspace, audienceId: string, memberId: string, filter: Filter | null) =>
  ws.api.POST(`${AUDIENCE}/members/{memberId}/explanation`, {
    params: { path: { workspaceId: ws.id, audienceId, memberId } },
    body: { filter },
  });
const explainSaved = (ws: TestWorkspace, audienceId: string, memberId: string) =>
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
    { id: "m04", fields: { score: "90", plan: "pro" } },
  ]);
  const vip = await createAudience(ws, "VIP");
  await addMembers(ws, vip, { memberIds: ["m02"] });
  const a = await createAudience(ws, "A");
  await ws.api.PUT(`${AUDIENCE}/filter`, {
    params: { path: { workspaceId: ws.id, audienceId: a } },
    body: { filter: { field: "fields.score", op: "gt", value: "60" } },
  });
  await addMembers(ws, a, { memberIds: ["m01"] });
  await ws.api.DELETE(`${AUDIENCE}/members`, {
    params: { path: { workspaceId: ws.id, audienceId: a } },
    body: { memberIds: ["m04"] },
  });
  return { vip, a };
}

const proOver40: Filter = {
  all: [
    { field: "fields.plan", op: "eq", value: "pro" },
    { field: "fields.score", op: "gt", value: "40" },
  ],
};

describe("explainDraftMembership", () => {
  it("explains a member against the draft, not the saved rule, keeping decisions by hand", async ({ ws }) => {
    const { a } = await buildWorkspace(ws);
    // m02 is not in A (score 50 is not over 60), and would enter with the draft.
    expect((await explainSaved(ws, a, "m02")).isMember).toBe(false);
    const nodes = (root: boolean, plan: [boolean, string], score: [boolean, string]) => ({
      matches: root,
      nodes: [
        { pointer: "", matches: root, value: null },
        { pointer: "/all/0", matches: plan[0], value: plan[1] },
        { pointer: "/all/1", matches: score[0], value: score[1] },
      ],
    });
    expect(await explainDraft(ws, a, "m02", proOver40)).toEqual({
      isMember: true,
      reason: "rule",
      manual: null,
      rule: nodes(true, [true, "pro"], [true, "50"]),
    });
    expect(await explainDraft(ws, a, "m03", proOver40)).toEqual({
      isMember: false,
      reason: null,
      manual: null,
      rule: nodes(false, [false, "free"], [true, "70"]),
    });
    expect(await explainDraft(ws, a, "m01", proOver40)).toEqual({
      isMember: true,
      reason: "manual",
      manual: "include",
      rule: nodes(false, [true, "pro"], [false, "5"]),
    });
    expect(await explainDraft(ws, a, "m04", proOver40)).toEqual({
      isMember: false,
      reason: null,
      manual: "exclude",
      rule: nodes(true, [true, "pro"], [true, "90"]),
    });
    // Nothing was saved.
    expect((await explainSaved(ws, a, "m02")).isMember).toBe(false);
  });

  it("reads the audiences the draft names, and explains no rule for a draft of null", async ({ ws }) => {
    const { vip, a } = await buildWorkspace(ws);
    const inVip: Filter = { field: "audience", op: "in", value: vip };
    expect((await explainDraft(ws, a, "m02", inVip)).rule).toEqual({
      matches: true,
      nodes: [{ pointer: "", matches: true, value: true }],
    });
    expect((await explainDraft(ws, a, "m03", inVip)).isMember).toBe(false);
    expect(await explainDraft(ws, a, "m03", null)).toEqual({ isMember: false, reason: null, manual: null, rule: null });
    expect(await explainDraft(ws, a, "m01", null)).toEqual({
      isMember: true,
      reason: "manual",
      manual: "include",
      rule: null,
    });
  });

  it("refuses what a dry run refuses, and an unknown member", async ({ ws }) => {
    const { a } = await buildWorkspace(ws);
    const bad = await rejectionOf(explainDraft(ws, a, "m01", { field: "fields.score", op: "contains", value: "5" }));
    expect([bad.status, bad.code]).toEqual([400, "invalid_filter"]);
    const cycle = await rejectionOf(explainDraft(ws, a, "m01", { field: "audience", op: "in", value: a }));
    expect([cycle.status, cycle.code]).toEqual([400, "filter_cycle"]);
    const unknown = await rejectionOf(explainDraft(ws, a, "nobody", proOver40));
    expect([unknown.status, unknown.code]).toEqual([404, "member_not_found"]);
    await ws.api.DELETE(AUDIENCE, { params: { path: { workspaceId: ws.id, audienceId: a } } });
    const archived = await rejectionOf(explainDraft(ws, a, "m01", proOver40));
    expect([archived.status, archived.code]).toEqual([409, "audience_archived"]);
  });
});

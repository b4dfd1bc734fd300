// A condition on a key no member holds counts 0 like any other: the preview and the dry run say
// why beside their counts (a misspelled key), and still answer.
import type { components } from "@audience-service/client";
import { describe, expect } from "vitest";
import { createAudience, createWorkspace, type TestWorkspace, upsertMembers } from "../support/factories.ts";
import { it } from "../support/fixture.ts";

type Filter = components["schemas"]["Filter"];

const preview = (ws: TestWorkspace, filter: Filter, nodeCounts = false) =>
  ws.api.POST("/v0/workspaces/{workspaceId}/audiences/preview", {
    params: { path: { workspaceId: ws.id } },
    body: { filter, limit: 1, nodeCounts },
  });

const dryRun = (ws: TestWorkspace, audienceId: string, filter: Filter) =>
  ws.api.POST("/v0/workspaces/{workspaceId}/audiences/{audienceId}/filter/preview", {
    params: { path: { workspaceId: ws.id, audienceId } },
    body: { filter },
  });

const plna = { pointer: "/all/1", code: "unknown_field", detail: "No member has a field named plna." };
const misspelled: Filter = {
  all: [
    { field: "fields.plan", op: "eq", value: "pro" },
    { field: "fields.plna", op: "eq", value: "pro" },
  ],
};

describe("warnings of a filter", () => {
  it("names a condition on a key no member holds in a preview, with and without node counts", async ({ ws }) => {
    await upsertMembers(ws, [{ id: "m1", fields: { plan: "pro" } }]);
    const plain = await preview(ws, misspelled);
    expect([plain.totalCount, plain.warnings]).toEqual([0, [plna]]);
    const counted = await preview(ws, misspelled, true);
    expect([counted.nodes?.map((node) => node.count), counted.warnings]).toEqual([[0, 1, 0], [plna]]);
  });

  it("names it in a dry run of an audience's rule", async ({ ws }) => {
    await upsertMembers(ws, [{ id: "m1", fields: { plan: "pro" } }]);
    const audienceId = await createAudience(ws);
    expect(await dryRun(ws, audienceId, misspelled)).toEqual({
      memberCount: 0,
      entering: { count: 0, sample: [] },
      leaving: { count: 0, sample: [] },
      warnings: [plna],
    });
  });

  it("says nothing of a held key, a named field or a declared one, and answers as before", async ({ ws }) => {
    await upsertMembers(ws, [{ id: "m1", fields: { plan: "pro" } }]);
    await ws.api.PUT("/v0/workspaces/{workspaceId}/fields/{fieldKey}", {
      params: { path: { workspaceId: ws.id, fieldKey: "score" } },
      body: { type: "number" },
    });
    const known: Filter = {
      any: [
        { field: "fields.plan", op: "eq", value: "pro" },
        { field: "fields.role", op: "eq", value: "CTO" },
        { field: "fields.score", op: "gt", value: "1" },
      ],
    };
    const answer = await preview(ws, known);
    expect(answer.totalCount).toBe(1);
    expect("warnings" in answer).toBe(false);
    expect("warnings" in (await dryRun(ws, await createAudience(ws), known))).toBe(false);
  });

  it("looks at this workspace's members only, and forgets a key once its last holder is gone", async ({
    ws,
    server,
  }) => {
    const other = await createWorkspace(server);
    await upsertMembers(other, [{ id: "m1", fields: { plna: "pro" } }]);
    await upsertMembers(ws, [{ id: "m1", fields: { plan: "pro", tier: "gold" } }]);
    expect((await preview(ws, misspelled)).warnings).toEqual([plna]);
    const tier: Filter = { not: { field: "fields.tier", op: "exists" } };
    expect("warnings" in (await preview(ws, tier))).toBe(false);
    await ws.api.PATCH("/v0/workspaces/{workspaceId}/members/{memberId}", {
      params: { path: { workspaceId: ws.id, memberId: "m1" } },
      body: { fields: { tier: null } },
    });
    expect((await preview(ws, tier)).warnings).toEqual([
      { pointer: "/not", code: "unknown_field", detail: "No member has a field named tier." },
    ]);
  });
});

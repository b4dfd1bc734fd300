import { describe, expect } from "vitest";
import { rejectionOf } from "../support/checked-client.ts";
import {
  addMembers,
  allMemberIds,
  createAudience,
  createAudiences,
  createWorkspace,
  type TestWorkspace,
} from "../support/factories.ts";
import { it } from "../support/fixture.ts";

const AUDIENCES = "/v0/workspaces/{workspaceId}/audiences";
const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";

const merge = (ws: TestWorkspace, name: string, audienceIds: string[]) =>
  ws.api.POST(`${AUDIENCES}/merge`, { params: { path: { workspaceId: ws.id } }, body: { name, audienceIds } });

describe("mergeAudiences", () => {
  it("creates a new audience holding the union of both, leaving the sources unchanged", async ({
    ws,
    api,
    workspaceId,
  }) => {
    const a = await createAudience(ws);
    const b = await createAudience(ws);
    await addMembers(ws, a, { memberIds: ["m1", "m2", "m3"] });
    await addMembers(ws, b, { memberIds: ["m3", "m4"] });

    const response = await api.raw.POST(`${AUDIENCES}/merge`, {
      params: { path: { workspaceId } },
      body: { name: "Everyone", audienceIds: [a, b] },
    });
    expect(response.response.status).toBe(201);
    expect(Object.keys(response.data ?? {})).toEqual(["id"]);
    const merged = response.data?.id ?? "";
    expect(merged).not.toBe(a);
    const path = { workspaceId, audienceId: merged };
    expect(await api.GET(AUDIENCE, { params: { path } })).toEqual({ id: merged, name: "Everyone" });
    expect((await allMemberIds(ws, merged)).sort()).toEqual(["m1", "m2", "m3", "m4"]);
    expect((await api.GET(`${AUDIENCE}/members`, { params: { path } })).totalCount).toBe(4);
    expect((await allMemberIds(ws, a)).sort()).toEqual(["m1", "m2", "m3"]);
    expect((await allMemberIds(ws, b)).sort()).toEqual(["m3", "m4"]);
  });

  it("gives a merged audience that is independent of its sources afterwards", async ({ ws, api, workspaceId }) => {
    const a = await createAudience(ws);
    const b = await createAudience(ws);
    await addMembers(ws, a, { memberIds: ["i1"] });
    const merged = (await merge(ws, "Independent", [a, b])).id;
    await addMembers(ws, a, { memberIds: ["i2"] });
    await api.DELETE(`${AUDIENCE}/members`, {
      params: { path: { workspaceId, audienceId: merged } },
      body: { memberIds: ["i1"] },
    });
    expect(await allMemberIds(ws, merged)).toEqual([]);
    expect((await allMemberIds(ws, a)).sort()).toEqual(["i1", "i2"]);
  });

  it("answers 409 when the new name is taken, and creates nothing", async ({ ws }) => {
    const a = await createAudience(ws, "Taken name");
    const b = await createAudience(ws);
    const error = await rejectionOf(merge(ws, "taken NAME", [a, b]));
    expect(error.status).toBe(409);
    expect(error.code).toBe("audience_name_taken");
  });

  it("answers 400 for the same audience twice", async ({ ws }) => {
    const a = await createAudience(ws);
    const error = await rejectionOf(merge(ws, "Twice", [a, a]));
    expect(error.status).toBe(400);
    expect(error.problem?.errors?.[0]?.pointer).toBe("/body/audienceIds");
  });

  it.for([[1], [3]] as const)("answers 400 for %i audience ids", async ([count], { ws }) => {
    const ids = await Promise.all(Array.from({ length: count }, () => createAudience(ws)));
    const error = await rejectionOf(merge(ws, `Count ${count}`, ids));
    expect(error.status).toBe(400);
    expect(error.problem?.errors?.[0]?.pointer).toBe("/body/audienceIds");
  });

  it("answers 404 for an unknown or foreign source, and creates nothing", async ({ ws, server, api, workspaceId }) => {
    const a = await createAudience(ws);
    const foreign = await createAudience(await createWorkspace(server));
    for (const missing of ["aud_missing", foreign]) {
      const error = await rejectionOf(merge(ws, "Never", [a, missing]));
      expect(error.status).toBe(404);
      expect(error.code).toBe("audience_not_found");
    }
    const list = await api.GET(AUDIENCES, { params: { path: { workspaceId }, query: { search: "never" } } });
    expect(list.results).toEqual([]);
  });

  it("answers 409 audience_archived when a source is archived", async ({ ws, api, workspaceId }) => {
    const a = await createAudience(ws);
    const b = await createAudience(ws);
    await api.DELETE(AUDIENCE, { params: { path: { workspaceId, audienceId: b } } });
    const error = await rejectionOf(merge(ws, "With archived", [a, b]));
    expect(error.status).toBe(409);
    expect(error.code).toBe("audience_archived");
  });

  it("answers 400 invalid_filter at /body/audienceIds when the merged rule would pass 100 conditions, and creates nothing", async ({
    ws,
  }) => {
    const a = await ruleAudience(ws, 60, 0);
    const b = await ruleAudience(ws, 41, 100);
    const error = await rejectionOf(merge(ws, "Too big", [a, b]));
    expect(error.status).toBe(400);
    expect(error.code).toBe("invalid_filter");
    expect(error.problem?.detail).toBe("The merged rule would hold 101 conditions; a rule holds at most 100.");
    expect(error.problem?.errors).toEqual([
      { pointer: "/body/audienceIds", message: "would hold 101 conditions; a rule holds at most 100" },
    ]);
    const list = await ws.api.GET(AUDIENCES, {
      params: { path: { workspaceId: ws.id }, query: { search: "too big" } },
    });
    expect(list.results).toEqual([]);
  });

  it("answers 400 invalid_filter at /body/audienceIds when the merged rule would reach more than 100 audiences", async ({
    ws,
  }) => {
    // Each reaches its hub and the hub's audiences: 61 and 41, together 102.
    const error = await rejectionOf(merge(ws, "Too far", [await reaching(ws, 60), await reaching(ws, 40)]));
    expect(error.status).toBe(400);
    expect(error.problem?.errors).toEqual([
      { pointer: "/body/audienceIds", message: "would reach more than 100 audiences through audience conditions" },
    ]);
  });

  it("merges two rules that fit together, and the merged rule reads back", async ({ ws, api, workspaceId }) => {
    const a = await ruleAudience(ws, 60, 0);
    const b = await ruleAudience(ws, 40, 100);
    const merged = (await merge(ws, "Just fits", [a, b])).id;
    const { filter } = await api.GET(`${AUDIENCE}/filter`, { params: { path: { workspaceId, audienceId: merged } } });
    expect(filter && "any" in filter ? filter.any.length : 0).toBe(100);
    // Merging it again with one more condition would make 101.
    const c = await ruleAudience(ws, 1, 200);
    const error = await rejectionOf(merge(ws, "One more", [merged, c]));
    expect(error.code).toBe("invalid_filter");
  });
});

/** An audience whose rule names `count` new audiences, and an audience whose rule names it. */
async function reaching(ws: TestWorkspace, count: number): Promise<string> {
  const leaves = await createAudiences(ws, count);
  const inA = (value: string) => ({ field: "audience" as const, op: "in" as const, value });
  const hub = await createAudience(ws);
  await ws.api.PUT(`${AUDIENCE}/filter`, {
    params: { path: { workspaceId: ws.id, audienceId: hub } },
    body: { filter: { any: leaves.map(inA) } },
  });
  const top = await createAudience(ws);
  await ws.api.PUT(`${AUDIENCE}/filter`, {
    params: { path: { workspaceId: ws.id, audienceId: top } },
    body: { filter: inA(hub) },
  });
  return top;
}

/** An audience whose rule is `any` of `count` e-mail conditions (numbered from `from`). */
async function ruleAudience(ws: TestWorkspace, count: number, from: number): Promise<string> {
  const id = await createAudience(ws);
  const any = Array.from({ length: count }, (_, i) => ({
    field: "email" as const,
    op: "eq" as const,
    value: `m${from + i}@x.io`,
  }));
  await ws.api.PUT(`${AUDIENCE}/filter`, {
    params: { path: { workspaceId: ws.id, audienceId: id } },
    body: { filter: { any } },
  });
  return id;
}

// The field catalogue is kept by the member writes themselves (triggers on members): each kind of
// write must leave it exactly what the members hold, in its own workspace only.
import { describe, expect } from "vitest";
import {
  addMembers,
  createAudience,
  createWorkspace,
  type TestWorkspace,
  upsertMembers,
} from "../support/factories.ts";
import { it } from "../support/fixture.ts";
import { csvOf, importCsv } from "../support/imports.ts";

const MEMBER = "/v0/workspaces/{workspaceId}/members/{memberId}";

/** The fields some member holds, key → [how many hold it, its sample values]. */
async function held(ws: TestWorkspace): Promise<Record<string, [number, string[]]>> {
  const { results } = await ws.api.GET("/v0/workspaces/{workspaceId}/fields", {
    params: { path: { workspaceId: ws.id } },
  });
  return Object.fromEntries(
    results
      .filter((field) => field.memberCount > 0)
      .map((field) => [field.key, [field.memberCount, field.sampleValues]]),
  );
}

const patch = (ws: TestWorkspace, memberId: string, fields: Record<string, string | null>) =>
  ws.api.PATCH(MEMBER, { params: { path: { workspaceId: ws.id, memberId } }, body: { fields } });

const deleteMembers = (ws: TestWorkspace, memberIds: string[]) =>
  ws.api.DELETE("/v0/workspaces/{workspaceId}/members", {
    params: { path: { workspaceId: ws.id } },
    body: { memberIds },
  });

describe("the field catalogue follows every member write", () => {
  it("counts members added through upserts and through an audience, merged ones once", async ({ ws }) => {
    await upsertMembers(ws, [
      { id: "m1", fields: { plan: "pro", company: "Acme" } },
      { id: "m2", fields: { plan: "free" } },
    ]);
    const audienceId = await createAudience(ws);
    await addMembers(ws, audienceId, {
      members: [
        { id: "m1", fields: { plan: "team" } },
        { email: "grace@example.com", fields: { plan: "pro", tier: "gold" } },
      ],
      memberIds: ["bare"],
    });
    expect(await held(ws)).toEqual({
      company: [1, ["Acme"]],
      plan: [3, ["free", "pro", "team"]],
      tier: [1, ["gold"]],
    });
  });

  it("follows PATCHes that add, change and remove keys", async ({ ws }) => {
    await upsertMembers(ws, [
      { id: "m1", fields: { plan: "pro" } },
      { id: "m2", fields: { plan: "pro", tier: "gold" } },
    ]);
    await patch(ws, "m1", { tier: "silver" });
    expect(await held(ws)).toEqual({ plan: [2, ["pro"]], tier: [2, ["gold", "silver"]] });
    await patch(ws, "m2", { plan: "free", tier: null });
    expect(await held(ws)).toEqual({ plan: [2, ["free", "pro"]], tier: [1, ["silver"]] });
    // "" keeps the stored value (the merge rules); null removes it.
    await patch(ws, "m1", { tier: null, plan: "" });
    expect(await held(ws)).toEqual({ plan: [2, ["free", "pro"]] });
    await patch(ws, "m1", { plan: null });
    expect(await held(ws)).toEqual({ plan: [1, ["free"]] });
  });

  it("forgets deleted members' values, and a key nobody holds any more", async ({ ws }) => {
    await upsertMembers(ws, [
      { id: "m1", fields: { plan: "pro", vip: "yes" } },
      { id: "m2", fields: { plan: "free" } },
      { id: "m3", fields: { plan: "free" } },
    ]);
    await deleteMembers(ws, ["m1", "m2"]);
    expect(await held(ws)).toEqual({ plan: [1, ["free"]] });
    await deleteMembers(ws, ["m3"]);
    expect(await held(ws)).toEqual({});
  });

  it("counts an import's new and merged rows", async ({ ws }) => {
    await upsertMembers(ws, [{ id: "m1", email: "ada@example.com", fields: { plan: "free" } }]);
    const job = await importCsv(
      ws,
      csvOf([
        ["email", "firstName", "plan", "city"],
        ["ada@example.com", "Ada", "pro", ""],
        ["grace@example.com", "Grace", "team", "Oslo"],
        ["linus@example.com", "", "pro", "Oslo"],
      ]),
    );
    expect([job.status, job.created, job.merged]).toEqual(["succeeded", 2, 1]);
    expect(await held(ws)).toEqual({
      city: [2, ["Oslo"]],
      firstName: [2, ["Ada", "Grace"]],
      plan: [3, ["pro", "team"]],
    });
  });

  it("shows the smallest values by code point, each cut to 100 characters", async ({ ws }) => {
    const long = "x".repeat(100);
    await upsertMembers(ws, [
      { id: "m1", fields: { note: `${long}first` } },
      { id: "m2", fields: { note: `${long}second` } },
      { id: "m3", fields: { note: "Zulu" } },
      { id: "m4", fields: { note: "alpha" } },
      { id: "m5", fields: { note: "Émile" } },
    ]);
    expect(await held(ws)).toEqual({ note: [5, ["Zulu", "alpha", long]] });
  });

  it("keeps its samples exact when a key has hundreds of values, and when the smallest go", async ({ ws }) => {
    // The catalogue lists a key's 100 smallest values once it holds more than 200, and reads
    // them again from the members when fewer than 3 of them are left.
    const code = (n: number) => `v${String(n).padStart(3, "0")}`;
    const holders = Array.from({ length: 250 }, (_, n) => ({ id: `m${n}`, fields: { code: code(n) } }));
    await upsertMembers(ws, holders);
    expect(await held(ws)).toEqual({ code: [250, ["v000", "v001", "v002"]] });
    await upsertMembers(ws, [{ id: "late", fields: { code: "u999" } }]);
    expect(await held(ws)).toEqual({ code: [251, ["u999", "v000", "v001"]] });
    await deleteMembers(ws, ["late", ...holders.slice(0, 99).map((member) => member.id)]);
    expect(await held(ws)).toEqual({ code: [151, ["v099", "v100", "v101"]] });
    await patch(ws, "m99", { code: "v300" });
    await patch(ws, "m100", { code: null });
    expect(await held(ws)).toEqual({ code: [150, ["v101", "v102", "v103"]] });
  });

  it("counts each workspace's members only", async ({ ws, server }) => {
    const other = await createWorkspace(server);
    await upsertMembers(ws, [{ id: "m1", fields: { plan: "pro" } }]);
    await upsertMembers(other, [
      { id: "m1", fields: { plan: "free", region: "eu" } },
      { id: "m2", fields: { plan: "free" } },
    ]);
    expect(await held(ws)).toEqual({ plan: [1, ["pro"]] });
    expect(await held(other)).toEqual({ plan: [2, ["free"]], region: [1, ["eu"]] });
    await deleteMembers(other, ["m1", "m2"]);
    expect(await held(ws)).toEqual({ plan: [1, ["pro"]] });
  });
});

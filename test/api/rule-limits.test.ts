import { describe, expect } from "vitest";
import type { Filter } from "../../src/features/membership/rules/filter.ts";
import { rejectionOf } from "../support/checked-client.ts";
import { createAudience, createAudiences, type TestWorkspace } from "../support/factories.ts";
import { it } from "../support/fixture.ts";

const AUDIENCES = "/v0/workspaces/{workspaceId}/audiences";
const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";

const setFilter = (ws: TestWorkspace, audienceId: string, filter: Filter | null) =>
  ws.api.PUT(`${AUDIENCE}/filter`, { params: { path: { workspaceId: ws.id, audienceId } }, body: { filter } });
const previewChange = (ws: TestWorkspace, audienceId: string, filter: Filter) =>
  ws.api.POST(`${AUDIENCE}/filter/preview`, { params: { path: { workspaceId: ws.id, audienceId } }, body: { filter } });
const merge = (ws: TestWorkspace, name: string, audienceIds: string[]) =>
  ws.api.POST(`${AUDIENCES}/merge`, { params: { path: { workspaceId: ws.id } }, body: { name, audienceIds } });
const inA = (id: string): Filter => ({ field: "audience", op: "in", value: id });
const emails = (count: number, from = 0): Filter => ({
  any: Array.from({ length: count }, (_, i) => ({ field: "email", op: "eq", value: `m${from + i}@x.io` })),
});
/** An audience with this rule. */
const ruled = async (ws: TestWorkspace, filter: Filter) => {
  const id = await createAudience(ws);
  await setFilter(ws, id, filter);
  return id;
};

describe("how far audience conditions reach", () => {
  it("refuses at once a rule over a wide layered graph whose chain would be too long", async ({ ws }) => {
    // Ten layers of three audiences, each naming the three below: 3^9 paths from a top audience.
    let below = await createAudiences(ws, 3);
    for (let layer = 1; layer < 10; layer++) {
      const filter: Filter = { any: below.map(inA) };
      // One after another: a key runs at most two rule changes at once (too_many_heavy_requests).
      const next: string[] = [];
      for (const _ of below) next.push(await ruled(ws, filter));
      below = next;
    }
    const top: Filter = { any: below.map(inA) };
    const target = await createAudience(ws);
    for (const attempt of [() => setFilter(ws, target, top), () => previewChange(ws, target, top)]) {
      const error = await rejectionOf(attempt());
      expect(error.status).toBe(400);
      expect(error.code).toBe("invalid_filter");
      expect(error.problem?.errors?.map((e) => e.pointer)).toEqual([0, 1, 2].map((i) => `/body/filter/any/${i}/value`));
    }
  });

  it("refuses a rule that would reach more than 100 audiences, pointing at its condition", async ({ ws }) => {
    const hub = await ruled(ws, { any: (await createAudiences(ws, 100)).map(inA) });
    const target = await createAudience(ws);
    const error = await rejectionOf(setFilter(ws, target, { all: [{ field: "email", op: "exists" }, inA(hub)] }));
    expect(error.status).toBe(400);
    expect(error.code).toBe("invalid_filter");
    expect(error.problem?.errors).toEqual([
      { pointer: "/body/filter/all/1/value", message: "reaches more than 100 audiences" },
    ]);
  });
});

describe("the bounds of a workspace's rules", () => {
  it("answers 409 rule_limit_exceeded past 1,000 conditions in all, for a rule and for a merge", async ({ ws }) => {
    for (let i = 0; i < 9; i++) await ruled(ws, emails(100, i * 100));
    const a = await ruled(ws, emails(50, 1_000));
    const b = await ruled(ws, emails(50, 1_050));
    const target = await createAudience(ws);
    const error = await rejectionOf(setFilter(ws, target, emails(1)));
    expect(error.status).toBe(409);
    expect(error.code).toBe("rule_limit_exceeded");
    expect(error.problem?.detail).toBe(
      "The workspace's rules would hold 1,001 conditions; a workspace's rules hold at most 1,000 (the other rules hold 1,000).",
    );
    const refused = await rejectionOf(merge(ws, "Past the bound", [a, b]));
    expect(refused.status).toBe(409);
    expect(refused.code).toBe("rule_limit_exceeded");
    expect(refused.problem?.detail).toContain("1,100 conditions");
    const list = await ws.api.GET(AUDIENCES, { params: { path: { workspaceId: ws.id }, query: { search: "past" } } });
    expect(list.results).toEqual([]);
    // A smaller rule is accepted at the bound, and makes room.
    expect((await setFilter(ws, a, emails(10, 1_000))).filter).toEqual(emails(10, 1_000));
    await setFilter(ws, b, emails(10, 1_050));
    expect((await merge(ws, "Fits now", [a, b])).id).toMatch(/^aud_/);
    expect((await setFilter(ws, target, emails(1))).filter).toEqual(emails(1));
  });

  it("answers 409 past 100 relative-time and activity conditions", async ({ ws }) => {
    const recent: Filter = { field: "createdAt", op: "withinLast", value: "P30D" };
    await ruled(ws, { any: Array.from({ length: 100 }, () => recent) });
    const error = await rejectionOf(setFilter(ws, await createAudience(ws), { not: recent }));
    expect(error.code).toBe("rule_limit_exceeded");
    expect(error.problem?.detail).toContain("101 relative-time and activity conditions");
  });

  it("answers 409 past 262,144 bytes of rules", async ({ ws }) => {
    const long = (n: number): Filter => ({
      field: "email",
      op: "in",
      value: Array.from({ length: 100 }, (_, i) => `${n}-${i}-`.padEnd(1_000, "x")),
    });
    await ruled(ws, long(1));
    await ruled(ws, long(2));
    const error = await rejectionOf(setFilter(ws, await createAudience(ws), long(3)));
    expect(error.code).toBe("rule_limit_exceeded");
    expect(error.problem?.detail).toMatch(/bytes of rules \(as JSON\); a workspace's rules hold at most 262,144/);
  });

  it("answers 409 when an 11th rule would name one audience", async ({ ws }) => {
    const named = await createAudience(ws);
    for (let i = 0; i < 10; i++) await ruled(ws, inA(named));
    const error = await rejectionOf(setFilter(ws, await createAudience(ws), { not: inA(named) }));
    expect(error.code).toBe("rule_limit_exceeded");
    expect(error.problem?.detail).toBe(
      `The rules of 10 audiences already name audience ${named}; the rules of at most 10 audiences may name one audience.`,
    );
  });
});

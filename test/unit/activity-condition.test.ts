// Activity conditions in the rule language: what parseFilter accepts and refuses (with the
// pointer), how counts, windows and `where` on the type read, and how matches() and the limits
// treat them. The SQL that counts is held to the reference evaluator by the store tests.
import { describe, expect, it } from "vitest";
import {
  activityWindow,
  countHolds,
  slidingEdges,
  typeHolds,
} from "../../src/features/membership/rules/activity-condition.ts";
import {
  activityConditionsOf,
  conditionCount,
  conditionsOf,
  type Filter,
  followsClock,
  leavesOf,
  parseFilter,
} from "../../src/features/membership/rules/filter.ts";
import { matches } from "../../src/features/membership/rules/filter-match.ts";
import { figuresOf } from "../../src/features/membership/rules/rule-bounds.ts";

const NOW = Date.UTC(2026, 10, 29, 12);
const DAY = 86_400_000;
const parse = (filter: unknown) => parseFilter(filter, { types: new Map(), activityRetentionDays: 400, now: NOW });
const refusal = (filter: unknown) => {
  try {
    parse(filter);
  } catch (error) {
    const { errors } = error as { errors: { pointer: string; message: string }[] };
    return errors[0];
  }
  throw new Error("accepted");
};

describe("parseFilter with activity conditions", () => {
  it("normalizes them: the default count written out, durations upper-cased, instants canonical", () => {
    expect(parse({ activity: "order.placed" })).toEqual({ activity: "order.placed", count: { op: "gte", value: 1 } });
    expect(parse({ activity: "a:b-c_d.e", withinLast: "p30d", count: { op: "eq", value: 0 } })).toEqual({
      activity: "a:b-c_d.e",
      count: { op: "eq", value: 0 },
      withinLast: "P30D",
    });
    expect(parse({ activity: "x", between: ["2026-11-01", "2026-11-02T10:00:00+01:00"] })).toMatchObject({
      between: ["2026-11-01T00:00:00.000Z", "2026-11-02T09:00:00.000Z"],
    });
    const where = {
      all: [{ field: "properties.amount", op: "between", value: ["1", "2"] }, { not: { field: "type", op: "exists" } }],
    };
    expect(parse({ not: { activity: "x", where, notWithinLast: "P7D" } })).toEqual({
      not: { activity: "x", count: { op: "gte", value: 1 }, where, notWithinLast: "P7D" },
    });
  });

  it("refuses what is not one, pointing at the part", () => {
    expect(refusal({ activity: "" })).toMatchObject({ pointer: "/body/filter/activity" });
    expect(refusal({ activity: "x".repeat(101) })).toMatchObject({ pointer: "/body/filter/activity" });
    expect(refusal({ activity: "x", field: "id" })).toMatchObject({ pointer: "/body/filter/field" });
    expect(refusal({ activity: "x", count: { op: "gte" } })).toMatchObject({ pointer: "/body/filter/count/value" });
    expect(refusal({ activity: "x", count: { op: "about", value: 1 } })).toMatchObject({
      pointer: "/body/filter/count/op",
    });
    expect(refusal({ activity: "x", count: { op: "eq", value: 1.5 } })).toMatchObject({
      pointer: "/body/filter/count/value",
    });
    expect(refusal({ activity: "x", count: { op: "eq", value: 1_000_001 } })).toMatchObject({
      pointer: "/body/filter/count/value",
    });
    expect(refusal({ activity: "x", count: { op: "eq", value: 1, max: 2 } })).toMatchObject({
      pointer: "/body/filter/count/max",
    });
    expect(refusal({ activity: "x", count: 2 })).toMatchObject({ pointer: "/body/filter/count" });
    expect(refusal({ activity: "x", withinLast: "30 days" })).toMatchObject({ pointer: "/body/filter/withinLast" });
    expect(refusal({ activity: "x", withinLast: "P1D", between: ["2026-11-01", "2026-11-02"] })).toMatchObject({
      pointer: "/body/filter/between",
    });
    expect(refusal({ activity: "x", between: ["2026-11-02", "2026-11-01"] })).toMatchObject({
      pointer: "/body/filter/between",
    });
    expect(refusal({ activity: "x", between: ["2026-11-02"] })).toMatchObject({ pointer: "/body/filter/between" });
    expect(refusal({ activity: "x", where: { field: "fields.plan", op: "eq", value: "a" } })).toMatchObject({
      pointer: "/body/filter/where/field",
    });
    expect(refusal({ activity: "x", where: { field: "type", op: "like", value: "a" } })).toMatchObject({
      pointer: "/body/filter/where/op",
    });
    expect(refusal({ activity: "x", where: { field: "type", op: "exists", value: "a" } })).toMatchObject({
      pointer: "/body/filter/where/value",
    });
    expect(refusal({ activity: "x", where: { any: [{ field: "properties.n", op: "in", value: [] }] } })).toMatchObject({
      pointer: "/body/filter/where/any/0/value",
    });
    expect(
      refusal({ activity: "x", where: { field: "properties.n", op: "between", value: ["3", "1"] } }),
    ).toMatchObject({
      pointer: "/body/filter/where/value",
    });
    expect(refusal({ activity: "x", where: { all: [] } })).toMatchObject({ pointer: "/body/filter/where/all" });
  });

  it("keeps windows within what is kept: withinLast up to the retention, notWithinLast shorter, between from within it", () => {
    expect(parse({ activity: "x", withinLast: "P400D" })).toMatchObject({ withinLast: "P400D" });
    expect(refusal({ activity: "x", withinLast: "P401D" })?.message).toBe(
      "must be at most the 400 days activities are kept (ACTIVITY_RETENTION_DAYS)",
    );
    expect(parse({ activity: "x", notWithinLast: "P399D" })).toMatchObject({ notWithinLast: "P399D" });
    expect(refusal({ activity: "x", notWithinLast: "P400D" })?.message).toBe(
      "must be shorter than the 400 days activities are kept (ACTIVITY_RETENTION_DAYS)",
    );
    expect(parse({ activity: "x", between: [new Date(NOW - 400 * DAY).toISOString(), "2026-11-02"] })).toBeTruthy();
    expect(
      refusal({ activity: "x", between: [new Date(NOW - 400 * DAY - 1).toISOString(), "2026-11-02"] }),
    ).toMatchObject({
      pointer: "/body/filter/between/0",
    });
    // Without a retention (a test's schema), windows are not checked against one.
    expect(parseFilter({ activity: "x", withinLast: "P3000D" }, { types: new Map() })).toMatchObject({
      withinLast: "P3000D",
    });
  });

  it("counts each condition of a `where` toward the filter's 100", () => {
    const where = { all: Array.from({ length: 99 }, () => ({ field: "type", op: "exists" })) };
    expect(conditionCount(parse({ activity: "x", where }))).toBe(100);
    expect(
      refusal({
        all: [
          { activity: "x", where },
          { field: "id", op: "exists" },
        ],
      }),
    ).toMatchObject({
      pointer: "/body/filter/all/1",
    });
    expect(refusal({ activity: "x", where: { all: [...where.all, { field: "type", op: "exists" }] } })).toMatchObject({
      pointer: "/body/filter/where/all/99",
    });
  });
});

describe("an activity condition's reading", () => {
  const condition = (extra: object) => parse({ activity: "x", ...extra }) as Extract<Filter, { activity: string }>;

  it("compares the count as its operator says, at least one by default", () => {
    const at = (op: string, value: number) => (n: number) => countHolds(condition({ count: { op, value } }), n);
    expect([0, 1, 2].map((n) => countHolds(condition({}), n))).toEqual([false, true, true]);
    expect([1, 2, 3].map(at("eq", 2))).toEqual([false, true, false]);
    expect([1, 2, 3].map(at("ne", 2))).toEqual([true, false, true]);
    expect([1, 2, 3].map(at("gt", 2))).toEqual([false, false, true]);
    expect([1, 2, 3].map(at("gte", 2))).toEqual([false, true, true]);
    expect([1, 2, 3].map(at("lt", 2))).toEqual([true, false, false]);
    expect([1, 2, 3].map(at("lte", 2))).toEqual([true, true, false]);
  });

  it("counts within its window, never before the retention, and slides at the edges it has", () => {
    const kept = NOW - 400 * DAY;
    expect(activityWindow(condition({}), NOW, 400)).toEqual({ from: kept, to: null, toOpen: false });
    expect(activityWindow(condition({}), NOW, undefined)).toEqual({ from: null, to: null, toOpen: false });
    expect(activityWindow(condition({ withinLast: "P30D" }), NOW, 400)).toEqual({
      from: NOW - 30 * DAY,
      to: null,
      toOpen: false,
    });
    expect(activityWindow(condition({ notWithinLast: "P30D" }), NOW, 400)).toEqual({
      from: kept,
      to: NOW - 30 * DAY,
      toOpen: true,
    });
    const between = condition({ between: ["2026-11-01", "2026-11-02"] });
    expect(activityWindow(between, NOW, 400)).toEqual({
      from: Date.UTC(2026, 10, 1),
      to: Date.UTC(2026, 10, 2),
      toOpen: false,
    });
    // A year on, the retention's edge has passed the window's start.
    expect(activityWindow(between, NOW + 395 * DAY, 400).from).toBe(NOW - 5 * DAY);
    expect(slidingEdges(condition({ withinLast: "P30D" }))).toEqual(["P30D"]);
    expect(slidingEdges(condition({ notWithinLast: "PT1H" }))).toEqual(["PT1H"]);
    expect(slidingEdges(between)).toEqual([]);
    expect(slidingEdges(condition({}))).toEqual([]);
  });

  it("decides a `where` on the type from the condition's own type, case-insensitively", () => {
    const holds = (op: string, value?: string | string[]) =>
      typeHolds({ field: "type", op, ...(value === undefined ? {} : { value }) } as never, "Order.Placed");
    expect(holds("eq", "order.placed")).toBe(true);
    expect(holds("ne", "order.placed")).toBe(false);
    expect(holds("in", ["x", "ORDER.PLACED"])).toBe(true);
    expect(holds("notIn", ["x"])).toBe(true);
    expect(holds("contains", "r.p")).toBe(true);
    expect(holds("startsWith", "order")).toBe(true);
    expect(holds("endsWith", "order")).toBe(false);
    expect(holds("exists")).toBe(true);
    expect(holds("notExists")).toBe(false);
    expect(holds("gt", "1")).toBe(false);
  });

  it("is matched by the tally the caller read, and a filter with one follows the clock", () => {
    const filter = parse({
      all: [
        { activity: "x", count: { op: "gte", value: 2 } },
        { field: "id", op: "eq", value: "m1" },
      ],
    });
    const member = { id: "m1", email: null, emails: [], fields: {} };
    const context = (count: number) => ({
      types: new Map(),
      now: NOW,
      inAudience: () => false,
      activity: () => ({ count, lastAt: null }),
    });
    expect(matches(filter, member, new Date(NOW), context(2))).toBe(true);
    expect(matches(filter, member, new Date(NOW), context(1))).toBe(false);
    expect(() =>
      matches(filter, member, new Date(NOW), { types: new Map(), now: NOW, inAudience: () => false }),
    ).toThrow("an activity condition evaluated without the member's activities");
    expect(leavesOf(filter)).toHaveLength(2);
    expect(conditionsOf(filter)).toEqual([{ field: "id", op: "eq", value: "m1" }]);
    expect(activityConditionsOf(filter)).toEqual([{ activity: "x", count: { op: "gte", value: 2 } }]);
    expect(followsClock(filter)).toBe(true);
    expect(followsClock(parse({ field: "id", op: "eq", value: "m1" }))).toBe(false);
    expect(followsClock(null)).toBe(false);
    expect(figuresOf(filter)).toMatchObject({ conditions: 2, timeConditions: 1 });
  });
});

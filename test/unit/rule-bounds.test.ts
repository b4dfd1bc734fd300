import { describe, expect, it } from "vitest";
import type { Filter } from "../../src/features/membership/rules/filter.ts";
import {
  figuresOf,
  filterLimitProblem,
  WORKSPACE_RULE_BOUNDS,
  workspaceBoundProblem,
} from "../../src/features/membership/rules/rule-bounds.ts";

const eq = (i: number): Filter => ({ field: "email", op: "eq", value: `m${i}@example.com` });
const any = (count: number, at = 0): Filter => ({ any: Array.from({ length: count }, (_, i) => eq(at + i)) });
const recent: Filter = { field: "createdAt", op: "withinLast", value: "P30D" };
const inA = (id: string): Filter => ({ field: "audience", op: "in", value: id });

describe("the bounds of a workspace's rules", () => {
  it("counts a rule's conditions, bytes and relative-time conditions", () => {
    const rule: Filter = { all: [eq(1), recent, { not: recent }] };
    expect(figuresOf(rule)).toEqual({ conditions: 3, bytes: JSON.stringify(rule).length, timeConditions: 2 });
    expect(figuresOf(null)).toEqual({ conditions: 0, bytes: 0, timeConditions: 0 });
  });

  it("refuses a rule that takes the workspace's conditions past the bound, naming it and the figure", () => {
    const full = Array.from({ length: WORKSPACE_RULE_BOUNDS.conditions / 100 }, (_, i) => ({
      id: `a${i}`,
      filter: any(100, i * 100),
    }));
    expect(workspaceBoundProblem(full, "new", eq(1))).toBe(
      "The workspace's rules would hold 1,001 conditions; a workspace's rules hold at most 1,000 (the other rules hold 1,000).",
    );
    // Replacing a rule by one of the same size, or smaller, is no growth.
    expect(workspaceBoundProblem(full, "a0", any(100, 5_000))).toBeUndefined();
    expect(workspaceBoundProblem(full, "a0", null)).toBeUndefined();
    // A workspace past the bound (filled before it) may shrink, not grow.
    const past = [...full, { id: "old", filter: any(10) }];
    expect(workspaceBoundProblem(past, "old", any(5))).toBeUndefined();
    expect(workspaceBoundProblem(past, "old", any(11))).toContain("1,011 conditions");
  });

  it("bounds the rules' bytes and their relative-time conditions", () => {
    const long = (i: number): Filter => ({
      field: "email",
      op: "in",
      value: Array.from({ length: 100 }, () => `${i}`.padEnd(1000, "x")),
    });
    const big = Array.from({ length: 2 }, (_, i) => ({ id: `b${i}`, filter: long(i) }));
    expect(workspaceBoundProblem(big, "new", long(9))).toMatch(
      /bytes of rules \(as JSON\); a workspace's rules hold at most 262,144/,
    );
    const timed = [{ id: "t", filter: { all: Array.from({ length: 100 }, () => recent) } }];
    expect(workspaceBoundProblem(timed, "new", eq(1))).toBeUndefined();
    expect(workspaceBoundProblem(timed, "new", recent)).toContain(
      "101 relative-time and activity conditions (withinLast, notWithinLast, activity); a workspace's rules hold at most 100",
    );
  });

  it("bounds how many rules name one audience", () => {
    const naming = Array.from({ length: WORKSPACE_RULE_BOUNDS.dependants }, (_, i) => ({
      id: `d${i}`,
      filter: inA("x"),
    }));
    expect(workspaceBoundProblem(naming, "new", inA("y"))).toBeUndefined();
    expect(workspaceBoundProblem(naming, "new", { all: [inA("y"), inA("x")] })).toBe(
      "The rules of 10 audiences already name audience x; the rules of at most 10 audiences may name one audience.",
    );
    // One of them keeps naming x.
    expect(workspaceBoundProblem(naming, "d0", { not: inA("x") })).toBeUndefined();
  });
});

describe("the limits of a rule the service makes (a merge's)", () => {
  it("names the depth or the number of conditions it would break", () => {
    expect(filterLimitProblem(null)).toBeUndefined();
    expect(filterLimitProblem(any(100))).toBeUndefined();
    expect(filterLimitProblem(any(101))).toBe("would hold 101 conditions; a rule holds at most 100");
    let deep: Filter = eq(1);
    for (let i = 0; i < 9; i++) deep = { not: deep };
    expect(filterLimitProblem(deep)).toBeUndefined();
    expect(filterLimitProblem({ any: [deep, eq(2)] })).toBe("would nest 11 levels deep; a rule nests at most 10");
    expect(filterLimitProblem({ all: [{ not: deep }] })).toBe("would nest 12 levels deep; a rule nests at most 10");
  });
});

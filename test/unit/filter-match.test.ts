// matches() on typed, relative-time and audience conditions: the boundaries, spelled out. The
// conditions go through parseFilter first, as every stored rule has.
import { describe, expect, it } from "vitest";
import type { FieldType } from "../../src/domain/field-types.ts";
import { foldMember, parseFilter } from "../../src/features/membership/rules/filter.ts";
import { matches, windowStart } from "../../src/features/membership/rules/filter-match.ts";

const TYPES = new Map<string, FieldType>([
  ["score", "number"],
  ["born", "date"],
  ["vip", "boolean"],
]);
const NOW = Date.parse("2026-03-31T12:00:00.000Z");
const CREATED = new Date("2026-01-15T00:00:00.000Z");

/** Whether a member with these custom fields (and created at CREATED) matches the condition. */
function holds(
  field: string,
  op: string,
  value: unknown,
  fields: Record<string, string>,
  options: { now?: number; createdAt?: Date; audiences?: string[] } = {},
): boolean {
  const filter = parseFilter(value === undefined ? { field, op } : { field, op, value }, { types: TYPES });
  const member = foldMember({ id: "M1", email: null, alternativeEmails: [], fields });
  const audiences = new Set(options.audiences ?? []);
  const context = { types: TYPES, now: options.now ?? NOW, inAudience: (id: string) => audiences.has(id) };
  return matches(filter, member, options.createdAt ?? CREATED, context);
}
const score = (value: string) => ({ score: value });
const born = (value: string) => ({ born: value });

describe("matches compares numbers by value", () => {
  it('"9" is less than "10", which a text comparison would not say', () => {
    expect(holds("fields.score", "lt", "10", score("9"))).toBe(true);
    expect(holds("fields.score", "gt", "10", score("9"))).toBe(false);
    expect(holds("fields.score", "gt", "9", score("10"))).toBe(true);
    expect(holds("fields.score", "lte", "9", score("10"))).toBe(false);
    expect(holds("fields.score", "gte", "-2", score("-10"))).toBe(false);
  });

  it('"10", "10.0" and "1e1" are equal', () => {
    for (const stored of ["10", "10.0", "1e1", "1E1", "+10"]) {
      for (const value of ["10", "10.0", "1e1"]) {
        expect(holds("fields.score", "eq", value, score(stored))).toBe(true);
        expect(holds("fields.score", "ne", value, score(stored))).toBe(false);
        expect(holds("fields.score", "in", ["3", value], score(stored))).toBe(true);
        expect(holds("fields.score", "notIn", [value, "3"], score(stored))).toBe(false);
      }
    }
    expect(holds("fields.score", "eq", "10", score("10.5"))).toBe(false);
    expect(holds("fields.score", "ne", "10", score("10.5"))).toBe(true);
    expect(holds("fields.score", "in", ["1", "100"], score("10"))).toBe(false);
    expect(holds("fields.score", "notIn", ["1", "100"], score("10"))).toBe(true);
    expect(holds("fields.score", "eq", "0", score("-0"))).toBe(true);
  });

  it("gte and lte hold at equality, gt and lt do not", () => {
    expect(holds("fields.score", "gte", "1e1", score("10"))).toBe(true);
    expect(holds("fields.score", "gt", "1e1", score("10"))).toBe(false);
    expect(holds("fields.score", "lte", "1e1", score("10"))).toBe(true);
    expect(holds("fields.score", "lt", "1e1", score("10"))).toBe(false);
    expect(holds("fields.score", "gte", "10.001", score("10"))).toBe(false);
    expect(holds("fields.score", "lte", "9.999", score("10"))).toBe(false);
    expect(holds("fields.score", "gt", "9.999", score("10"))).toBe(true);
    expect(holds("fields.score", "lt", "10.001", score("10"))).toBe(true);
  });

  it("between is inclusive at both ends", () => {
    const range = ["-1.5", "10"];
    for (const [stored, inside] of [
      ["-1.5", true],
      ["0", true],
      ["1e1", true],
      ["-1.6", false],
      ["10.01", false],
      ["-20", false],
      ["100", false],
    ] as const) {
      expect(holds("fields.score", "between", range, score(stored)), stored).toBe(inside);
    }
  });
});

describe("matches compares dates as instants", () => {
  it("an offset is the UTC instant it names, a date alone is UTC midnight", () => {
    for (const stored of [
      "2026-01-31",
      "2026-01-31T00:00:00Z",
      "2026-01-31T01:00:00+01:00",
      "2026-01-30T19:00-05:00",
    ]) {
      expect(holds("fields.born", "gte", "2026-01-31T00:00:00.000Z", born(stored)), stored).toBe(true);
      expect(holds("fields.born", "lte", "2026-01-31", born(stored)), stored).toBe(true);
      expect(holds("fields.born", "gt", "2026-01-31T02:00:00+02:00", born(stored)), stored).toBe(false);
      expect(holds("fields.born", "lt", "2026-01-31", born(stored)), stored).toBe(false);
      expect(holds("fields.born", "after", "2026-01-31", born(stored)), stored).toBe(false);
      expect(holds("fields.born", "before", "2026-01-31", born(stored)), stored).toBe(false);
      expect(holds("fields.born", "between", ["2026-01-31", "2026-01-31"], born(stored)), stored).toBe(true);
    }
  });

  it("one millisecond either side decides before, after and between", () => {
    const stored = born("2026-01-31T09:00:00.000Z");
    expect(holds("fields.born", "after", "2026-01-31T08:59:59.999Z", stored)).toBe(true);
    expect(holds("fields.born", "gt", "2026-01-31T08:59:59.999Z", stored)).toBe(true);
    expect(holds("fields.born", "before", "2026-01-31T09:00:00.001Z", stored)).toBe(true);
    expect(holds("fields.born", "lt", "2026-01-31T09:00:00.001Z", stored)).toBe(true);
    expect(holds("fields.born", "after", "2026-01-31T09:00:00.001Z", stored)).toBe(false);
    expect(holds("fields.born", "before", "2026-01-31T08:59:59.999Z", stored)).toBe(false);
    expect(holds("fields.born", "between", ["2026-01-31T09:00:00.001Z", "2026-02-01"], stored)).toBe(false);
    expect(holds("fields.born", "between", ["2026-01-01", "2026-01-31T08:59:59.999Z"], stored)).toBe(false);
  });

  it("reads a stored value in lower case and with a year below 100", () => {
    expect(holds("fields.born", "before", "2026-01-31T09:00:01Z", born("2026-01-31t09:00:00z"))).toBe(true);
    expect(holds("fields.born", "before", "1950-01-01", born("0050-01-01"))).toBe(true);
    expect(holds("fields.born", "between", ["0049-12-31", "0050-01-01"], born("0050-01-01"))).toBe(true);
  });

  it("compares createdAt the same way", () => {
    const at = { createdAt: new Date("2026-01-31T09:00:00.000Z") };
    expect(holds("createdAt", "gte", "2026-01-31T10:00:00+01:00", {}, at)).toBe(true);
    expect(holds("createdAt", "gt", "2026-01-31T10:00:00+01:00", {}, at)).toBe(false);
    expect(holds("createdAt", "lte", "2026-01-31T09:00:00Z", {}, at)).toBe(true);
    expect(holds("createdAt", "lt", "2026-01-31T09:00:00Z", {}, at)).toBe(false);
    expect(holds("createdAt", "between", ["2026-01-31T09:00:00Z", "2026-02-01"], {}, at)).toBe(true);
    expect(holds("createdAt", "after", "2026-01-31", {}, at)).toBe(true);
  });
});

describe("matches relative time", () => {
  // At NOW (31 March, 12:00 UTC), the last month starts on 28 February at 12:00.
  const start = "2026-02-28T12:00:00.000Z";

  it("starts the window the duration before now, months on the calendar", () => {
    expect(new Date(windowStart("P1M", NOW)).toISOString()).toBe(start);
    expect(new Date(windowStart("P1M1D", NOW)).toISOString()).toBe("2026-02-27T12:00:00.000Z");
    expect(new Date(windowStart("PT12H", NOW)).toISOString()).toBe("2026-03-31T00:00:00.000Z");
  });

  it.each([
    ["just before the window", "2026-02-28T11:59:59.999Z", false],
    ["exactly at its start", start, true],
    ["at its start, with an offset", "2026-02-28T13:00:00+01:00", true],
    ["inside it", "2026-03-15", true],
    ["exactly now", "2026-03-31T12:00:00.000Z", true],
    ["in the future", "2026-03-31T12:00:00.001Z", false],
    ["long ago", "2020-01-01", false],
  ])("a date %s", (_case, stored, inside) => {
    expect(holds("fields.born", "withinLast", "P1M", born(stored))).toBe(inside);
    expect(holds("fields.born", "notWithinLast", "P1M", born(stored))).toBe(!inside);
  });

  it("a date alone is its UTC midnight in a window of hours", () => {
    expect(holds("fields.born", "withinLast", "PT12H", born("2026-03-31"), { now: NOW })).toBe(true);
    expect(holds("fields.born", "withinLast", "PT12H", born("2026-03-31"), { now: NOW + 1 })).toBe(false);
  });

  it("follows the clock: the same member leaves the window as now moves", () => {
    const at = { createdAt: new Date(start) };
    expect(holds("createdAt", "withinLast", "P1M", {}, { ...at, now: NOW })).toBe(true);
    // 31 March 12:00:00.001 less a month is 28 February 12:00:00.001: the member has just left.
    expect(holds("createdAt", "withinLast", "P1M", {}, { ...at, now: NOW + 1 })).toBe(false);
    expect(holds("createdAt", "notWithinLast", "P1M", {}, { ...at, now: NOW + 1 })).toBe(true);
    // On 28 March, the member is inside a month's window.
    expect(holds("createdAt", "withinLast", "P1M", {}, { ...at, now: Date.parse("2026-03-28T12:00:00.000Z") })).toBe(
      true,
    );
    expect(holds("createdAt", "withinLast", "PT1H", {}, { ...at, now: Date.parse(start) })).toBe(true);
    expect(holds("createdAt", "withinLast", "PT1H", {}, { ...at, now: Date.parse(start) - 1 })).toBe(false);
  });
});

describe("matches booleans", () => {
  it("in any case against the rule's value", () => {
    expect(holds("fields.vip", "eq", "true", { vip: "TRUE" })).toBe(true);
    expect(holds("fields.vip", "eq", "TRUE", { vip: "true" })).toBe(true);
    expect(holds("fields.vip", "eq", "false", { vip: "True" })).toBe(false);
    expect(holds("fields.vip", "eq", "False", { vip: "false" })).toBe(true);
    expect(holds("fields.vip", "exists", undefined, { vip: "false" })).toBe(true);
    expect(holds("fields.vip", "notExists", undefined, { vip: "false" })).toBe(false);
  });
});

describe("matches a member without a value", () => {
  const missing: [string, string, unknown][] = [
    ["fields.score", "eq", "1"],
    ["fields.score", "gt", "1"],
    ["fields.score", "gte", "1"],
    ["fields.score", "lt", "1"],
    ["fields.score", "lte", "1"],
    ["fields.score", "between", ["-1e99", "1e99"]],
    ["fields.score", "in", ["1"]],
    ["fields.score", "exists", undefined],
    ["fields.born", "before", "9999-12-31"],
    ["fields.born", "after", "0001-01-01"],
    ["fields.born", "gt", "2026-01-01"],
    ["fields.born", "gte", "2026-01-01"],
    ["fields.born", "lt", "2026-01-01"],
    ["fields.born", "lte", "2026-01-01"],
    ["fields.born", "between", ["0001-01-01", "9999-12-31"]],
    ["fields.born", "withinLast", "P10Y"],
    ["fields.born", "notWithinLast", "PT1S"],
    ["fields.born", "exists", undefined],
    ["fields.vip", "eq", "true"],
    ["fields.vip", "eq", "false"],
    ["fields.vip", "exists", undefined],
  ];
  it.each(missing)("by none of %s %s %j", (field, op, value) => {
    expect(holds(field, op, value, {})).toBe(false);
    expect(holds(field, op, value, { score: "", born: "", vip: "" })).toBe(false);
  });

  it.each([
    ["fields.score", "ne", "1"],
    ["fields.score", "notIn", ["1", "2"]],
    ["fields.score", "notExists", undefined],
    ["fields.born", "notExists", undefined],
    ["fields.vip", "notExists", undefined],
  ])("by %s %s %j, the negations", (field, op, value) => {
    expect(holds(field, op, value, {})).toBe(true);
    expect(holds(field, op, value, { score: "", born: "", vip: "" })).toBe(true);
  });

  it("and a member with a value, by presence", () => {
    expect(holds("fields.score", "exists", undefined, score("0"))).toBe(true);
    expect(holds("fields.score", "notExists", undefined, score("0"))).toBe(false);
    expect(holds("fields.born", "exists", undefined, born("2026-01-01"))).toBe(true);
    expect(holds("fields.born", "notExists", undefined, born("2026-01-01"))).toBe(false);
  });
});

describe("matches audience conditions", () => {
  it("by whether the member is in the audience named", () => {
    expect(holds("audience", "in", "aud_a", {}, { audiences: ["aud_a"] })).toBe(true);
    expect(holds("audience", "in", "aud_a", {}, { audiences: ["aud_b"] })).toBe(false);
    expect(holds("audience", "notIn", "aud_a", {}, { audiences: ["aud_a"] })).toBe(false);
    expect(holds("audience", "notIn", "aud_a", {}, { audiences: [] })).toBe(true);
  });

  it("combined: intersection, difference and union of audiences", () => {
    const member = foldMember({ id: "m", email: null, alternativeEmails: [], fields: {} });
    const context = (ids: string[]) => ({ types: TYPES, now: NOW, inAudience: (id: string) => ids.includes(id) });
    const a = { field: "audience", op: "in", value: "a" } as const;
    const notB = { field: "audience", op: "notIn", value: "b" } as const;
    expect(matches({ all: [a, notB] }, member, CREATED, context(["a"]))).toBe(true);
    expect(matches({ all: [a, notB] }, member, CREATED, context(["a", "b"]))).toBe(false);
    expect(matches({ any: [a, { not: notB }] }, member, CREATED, context(["b"]))).toBe(true);
    expect(matches({ any: [a, { not: notB }] }, member, CREATED, context([]))).toBe(false);
  });
});

describe("matches an undeclared field as text", () => {
  it('so "10" and "10.0" differ and "9" sorts after "10"', () => {
    const filter = parseFilter({ field: "fields.other", op: "eq", value: "10" }, { types: TYPES });
    const member = foldMember({ id: "m", email: null, alternativeEmails: [], fields: { other: "10.0" } });
    expect(matches(filter, member, CREATED, { types: TYPES, now: NOW, inAudience: () => false })).toBe(false);
  });
});

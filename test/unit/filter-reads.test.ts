// What a filter reads: its conditions, the custom fields and the audiences they name (which decide
// whether a field may be retyped and which audiences a rule depends on).
import { describe, expect, it } from "vitest";
import { audiencesOf, conditionsOf, type Filter, fieldsOf } from "../../src/features/membership/rules/filter.ts";

const a = { field: "fields.score", op: "gt", value: "1" } as const;
const b = { field: "audience", op: "in", value: "aud_1" } as const;
const c = { field: "email", op: "exists" } as const;
const d = { field: "fields.born", op: "withinLast", value: "P1D" } as const;
const e = { field: "audience", op: "notIn", value: "aud_2" } as const;
const f = { field: "fields.score", op: "lt", value: "9" } as const;
const g = { field: "audience", op: "in", value: "aud_1" } as const;
const nested: Filter = { all: [a, { any: [b, { not: c }] }, { not: { all: [d, e] } }, f, g] };

describe("conditionsOf", () => {
  it("lists every condition in document order, through all, any and not", () => {
    expect(conditionsOf(nested)).toStrictEqual([a, b, c, d, e, f, g]);
    expect(conditionsOf({ any: [c, a] })).toStrictEqual([c, a]);
    expect(conditionsOf({ not: d })).toStrictEqual([d]);
    expect(conditionsOf(a)).toStrictEqual([a]);
  });

  it("lists none without a filter", () => {
    expect(conditionsOf(null)).toStrictEqual([]);
  });
});

describe("fieldsOf", () => {
  it("names each custom field once, without its prefix, and no built-in field", () => {
    expect(fieldsOf(nested)).toStrictEqual(["score", "born"]);
    expect(fieldsOf({ any: [c, { field: "createdAt", op: "after", value: "2026-01-01" }, b] })).toStrictEqual([]);
    expect(fieldsOf(null)).toStrictEqual([]);
  });
});

describe("audiencesOf", () => {
  it("names each audience that a condition names once, whether in or notIn", () => {
    expect(audiencesOf(nested)).toStrictEqual(["aud_1", "aud_2"]);
    expect(audiencesOf({ all: [a, c] })).toStrictEqual([]);
    expect(audiencesOf(null)).toStrictEqual([]);
  });
});

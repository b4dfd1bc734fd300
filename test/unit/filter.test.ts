import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FILTER_OPERATORS } from "../../generated/filter-operators.ts";
import type { AppError } from "../../src/domain/errors.ts";
import { type Filter, foldMember, parseFilter, unionFilter } from "../../src/features/membership/rules/filter.ts";
import { matches } from "../../src/features/membership/rules/filter-match.ts";
import { detailOf, refusalOf } from "../support/filter-refusal.ts";
import { opsOf } from "../support/operator-shapes.ts";
import { type PlainMember, referenceMatches } from "../support/reference-filter.ts";

const NO_TYPES = { types: new Map() };
const parse = (input: unknown, pointer?: string) => parseFilter(input, NO_TYPES, pointer);

const refusal = (input: unknown) => refusalOf(parse, input);

const cond = (field: unknown, op: unknown, value?: unknown) =>
  value === undefined ? { field, op } : { field, op, value };
const nested = (depth: number): unknown => (depth === 1 ? cond("id", "exists") : { not: nested(depth - 1) });

const R = "/body/filter";
const F = "/body/filter/field";
const O = "/body/filter/op";
const V = "/body/filter/value";
const FIELD = "must be id, email, anyEmail, createdAt, audience or fields.<key>";
const FILTERS = "must be a list of 1 to 100 filters";
const LIST = "must be a list of 1 to 100 strings of at most 1,024 characters";
const STRING = "must be a string of at most 1,024 characters, without NUL";
const TIME =
  'must be a date ("2026-01-31") or a date and time with an offset ("2026-01-31T09:00:00Z"), in the years 0001 to 9999';
const STRING_OPS = "eq, ne, contains, startsWith, endsWith, in, notIn, exists, notExists";

describe("parseFilter refuses, pointing at the bad node", () => {
  it.each([
    ["a string", "x", R, "must be an object"],
    ["null", null, R, "must be an object"],
    ["a list", [cond("id", "exists")], R, "must be an object"],
    ["all with another key", { all: [cond("id", "exists")], not: {} }, R, 'must hold only "all"'],
    ["any with another key", { any: [cond("id", "exists")], x: 1 }, R, 'must hold only "any"'],
    ["not with another key", { not: cond("id", "exists"), field: "id" }, R, 'must hold only "not"'],
    ["all of nothing", { all: [] }, "/body/filter/all", FILTERS],
    ["any of a non-list", { any: {} }, "/body/filter/any", FILTERS],
    ["a bad child", { any: [cond("id", "exists"), 3] }, "/body/filter/any/1", "must be an object"],
    [
      "a bad child under not",
      { not: { all: [cond("id", "exists"), []] } },
      "/body/filter/not/all/1",
      "must be an object",
    ],
    [
      "an unknown key",
      { field: "id", op: "eq", value: "a", extra: 1 },
      "/body/filter/extra",
      "is not part of a condition (field, op, value)",
    ],
    ["no field", { op: "exists" }, F, FIELD],
    ["a field in a list", cond(["id"], "exists"), F, FIELD],
    ["an unknown field", cond("name", "exists"), F, FIELD],
    ["a field key of 65 characters", cond(`fields.a${"b".repeat(64)}`, "exists"), F, FIELD],
    ["a field key starting with a digit", cond("fields.1a", "exists"), F, FIELD],
    ["text around a field", cond("xid", "exists"), F, FIELD],
    ["a field with a suffix", cond("idx", "exists"), F, FIELD],
    [
      "a time operator on a string",
      cond("email", "before", "2026-01-01T00:00:00Z"),
      O,
      `must be one of ${STRING_OPS} for email`,
    ],
    [
      "a string operator on createdAt",
      cond("createdAt", "eq", "2026-01-01T00:00:00Z"),
      O,
      "must be one of before, after, gt, gte, lt, lte, between, withinLast, notWithinLast for createdAt",
    ],
    ["an operator that is not a string", cond("id", 1, "a"), O, `must be one of ${STRING_OPS} for id`],
    ["a value for exists", cond("id", "exists", "a"), V, "must be absent for exists"],
    ["a value for notExists", cond("id", "notExists", ""), V, "must be absent for notExists"],
    ["in without a list", cond("id", "in", "a"), V, LIST],
    ["in of nothing", cond("id", "in", []), V, LIST],
    [
      "in of 101",
      cond(
        "id",
        "notIn",
        Array.from({ length: 101 }, (_, i) => `v${i}`),
      ),
      V,
      LIST,
    ],
    ["in of a number", cond("id", "in", ["a", 1]), V, LIST],
    ["in of a list", cond("id", "in", [["a"]]), V, LIST],
    ["in of 1,025 characters", cond("id", "in", ["x".repeat(1025)]), V, LIST],
    ["in with a NUL", cond("id", "in", ["a\u0000"]), V, LIST],
    ["eq without a value", cond("id", "eq"), V, STRING],
    ["eq of a list", cond("id", "eq", ["a"]), V, STRING],
    ["eq of 1,025 characters", cond("id", "eq", "x".repeat(1025)), V, STRING],
    ["eq with a NUL", cond("id", "eq", "a\u0000b"), V, STRING],
    ["a time that is not ISO 8601", cond("createdAt", "before", "November 1, 2026"), V, TIME],
    ["a time that is no time", cond("createdAt", "before", "2026-13-45T99:00:00Z"), V, TIME],
    ["a year with a sign", cond("createdAt", "after", "+002026-01-01T00:00:00.000Z"), V, TIME],
    ["after 9999 by its offset", cond("createdAt", "after", "9999-12-31T23:59:59.999-01:00"), V, TIME],
    ["before 0001 by its offset", cond("createdAt", "after", "0001-01-01T00:00:00.000+01:00"), V, TIME],
    ["the year 0000", cond("createdAt", "after", "0000-12-31T23:59:59.999Z"), V, TIME],
    ["the year 10000", cond("createdAt", "after", "+010000-01-01T00:00:00.000Z"), V, TIME],
    ["a time of 1,025 characters", cond("createdAt", "after", `2026-01-01T${"0".repeat(1014)}`), V, STRING],
  ])("%s", (_case, input, pointer, message) => {
    expect(refusal(input)).toEqual({
      code: "invalid_filter",
      detail: detailOf(input, pointer, message),
      pointer,
      message,
    });
  });

  it("a filter nested 11 levels deep, but not one of 10", () => {
    expect(() => parse(nested(10))).not.toThrow();
    expect(refusal(nested(11))).toMatchObject({
      pointer: `/body/filter${"/not".repeat(10)}`,
      message: "nests deeper than 10 levels",
    });
    expect(refusal({ all: [nested(10)] })).toMatchObject({ message: "nests deeper than 10 levels" });
  });

  it("101 conditions in one list or in all, but not 100", () => {
    const conditions = (n: number) => Array.from({ length: n }, () => cond("id", "exists"));
    expect(() => parse({ all: conditions(100) })).not.toThrow();
    expect(refusal({ any: conditions(101) })).toMatchObject({
      pointer: "/body/filter/any",
      message: "must be a list of 1 to 100 filters",
    });
    expect(() => parse({ all: [{ any: conditions(50) }, { any: conditions(50) }] })).not.toThrow();
    expect(refusal({ all: [{ any: conditions(50) }, { any: conditions(51) }] })).toMatchObject({
      pointer: "/body/filter/all/1/any/50",
      message: "exceeds 100 conditions in all",
    });
  });

  it("at the pointer it is given", () => {
    expect(refusal({ not: 1 })).toMatchObject({ pointer: "/body/filter/not" });
    try {
      parse({ not: 1 }, "/body/rules/0");
    } catch (error) {
      expect((error as AppError).errors).toEqual([{ pointer: "/body/rules/0/not", message: "must be an object" }]);
    }
  });
});

describe("parseFilter accepts", () => {
  it("the limits themselves: values of 1,024 characters, lists of 100, field keys of 64", () => {
    const key = `fields.a${"b".repeat(63)}`;
    const list = Array.from({ length: 100 }, () => "y".repeat(1024));
    expect(parse(cond(key, "eq", "x".repeat(1024)))).toEqual(cond(key, "eq", "x".repeat(1024)));
    expect(parse(cond("anyEmail", "in", list))).toEqual(cond("anyEmail", "in", list));
    expect(parse(cond("id", "in", [""]))).toEqual(cond("id", "in", [""]));
    expect(parse(cond("email", "eq", ""))).toEqual(cond("email", "eq", ""));
  });

  it("every string operator on every string field, and presence without a value", () => {
    for (const field of ["id", "email", "anyEmail", "fields.company_2"]) {
      for (const op of opsOf("string", "one")) {
        expect(parse(cond(field, op, "A"))).toEqual(cond(field, op, "A"));
      }
      expect(parse(cond(field, "notIn", ["a"]))).toEqual(cond(field, "notIn", ["a"]));
      expect(parse(cond(field, "exists"))).toStrictEqual({ field, op: "exists" });
      expect(parse(cond(field, "notExists"))).toStrictEqual({ field, op: "notExists" });
    }
  });

  it("timestamps from the first to the last instant PostgreSQL holds, made canonical", () => {
    expect(parse(cond("createdAt", "after", "0001-01-01T00:00:00.000Z"))).toEqual(
      cond("createdAt", "after", "0001-01-01T00:00:00.000Z"),
    );
    expect(parse(cond("createdAt", "before", "9999-12-31T23:59:59.999Z"))).toEqual(
      cond("createdAt", "before", "9999-12-31T23:59:59.999Z"),
    );
    expect(parse(cond("createdAt", "before", "2026-11-21T10:40:00+01:00"))).toEqual(
      cond("createdAt", "before", "2026-11-21T09:40:00.000Z"),
    );
  });

  it("combinators as they were sent, with no key added", () => {
    const input = { all: [{ any: [cond("id", "eq", "a")] }, { not: cond("email", "exists") }] };
    expect(parse(input)).toStrictEqual(input);
  });
});

describe("foldMember", () => {
  it("lower-cases every address and value and leaves empty fields out", () => {
    expect(
      foldMember({ id: "M1", email: "Ada@X.io", alternativeEmails: ["B@Y.io"], fields: { a: "Äb", b: "" } }),
    ).toStrictEqual({ id: "m1", email: "ada@x.io", emails: ["ada@x.io", "b@y.io"], fields: { a: "äb" } });
    expect(foldMember({ id: "m", email: null, alternativeEmails: ["c@z.io"], fields: {} })).toStrictEqual({
      id: "m",
      email: null,
      emails: ["c@z.io"],
      fields: {},
    });
  });
});

describe("unionFilter", () => {
  const a: Filter = { field: "id", op: "eq", value: "a" };
  const b: Filter = { field: "id", op: "eq", value: "b" };
  it("is the other filter when one is null, and flattens any-of lists", () => {
    expect(unionFilter(null, null)).toBeNull();
    expect(unionFilter(a, null)).toBe(a);
    expect(unionFilter(null, b)).toBe(b);
    expect(unionFilter(a, b)).toEqual({ any: [a, b] });
    expect(unionFilter({ any: [a, b] }, { any: [b] })).toEqual({ any: [a, b, b] });
    expect(unionFilter({ all: [a] }, { not: b })).toEqual({ any: [{ all: [a] }, { not: b }] });
  });
});

// matches() against the reference evaluator, over members and filters built from a few values
// chosen so that every operator meets both outcomes (case, prefixes, suffixes, absent fields).
// Typed fields (issue 30): numbers equal in several spellings, dates at the edges of the windows
// that the durations below open at the instants of NOW (a month back from 31 March is 28 February).
const TYPES = { score: "number", born: "date", vip: "boolean" } as const;
const BORN = [
  "2026-01-31",
  "2026-01-31T01:00:00+01:00",
  "2026-02-28T12:00:00Z",
  "2026-02-28T11:59:59.999Z",
  "2026-03-31T12:00:00.000Z",
  "2026-03-31T12:00:00.001Z",
  "2026-03-31t14:00:00+02:00",
  "0050-01-01",
];
const NOW = ["2026-03-31T12:00:00.000Z", "2026-03-30T00:00:00.000Z", "2026-04-01T00:00:00.000Z"].map(Date.parse);
const NUMBERS = ["9", "10", "1e1", "10.0", "-1.5", "0", "99.5"];
const TIMES = [...BORN, "2026-02-28T13:00:00+01:00", "2026-01-01T00:00:00.000Z"];
const DURATIONS = ["P1M", "P30D", "PT12H", "P1Y2M", "P1W", "P1M1D", "P2M", "PT36H"];
const AUDIENCE_IDS = ["m1", "M1", "acme", "Ärger"];
const typedCondition: fc.Arbitrary<Filter> = fc.oneof(
  fc.record({
    field: fc.constant("fields.score"),
    op: fc.constantFrom(...opsOf("number", "one")),
    value: fc.constantFrom(...NUMBERS),
  }),
  fc.record({
    field: fc.constant("fields.score"),
    op: fc.constantFrom(...opsOf("number", "list")),
    value: fc.subarray(NUMBERS, { minLength: 1 }),
  }),
  fc.record({
    field: fc.constant("fields.score"),
    op: fc.constantFrom(...opsOf("number", "pair")),
    // Every low is at most every high, so that parseFilter takes the pair.
    value: fc.tuple(fc.constantFrom("-1.5", "0", "9", "1e1"), fc.constantFrom("1e1", "10.0", "100")),
  }),
  fc.record({
    field: fc.constantFrom("fields.born", "createdAt"),
    op: fc.constantFrom(...opsOf("date", "one")),
    value: fc.constantFrom(...TIMES),
  }),
  fc.record({
    field: fc.constantFrom("fields.born", "createdAt"),
    op: fc.constantFrom(...opsOf("date", "pair")),
    value: fc.tuple(
      fc.constantFrom("2026-01-31", "2026-02-28T12:00:00Z", "0050-01-01"),
      fc.constantFrom("2026-02-28T13:00:00+01:00", "2026-03-31T12:00:00.000Z"),
    ),
  }),
  fc.record({
    field: fc.constantFrom("fields.born", "createdAt"),
    op: fc.constantFrom(...opsOf("date", "duration")),
    value: fc.constantFrom(...DURATIONS),
  }),
  fc.record({
    field: fc.constant("fields.vip"),
    op: fc.constantFrom(...opsOf("boolean", "one")),
    value: fc.constantFrom("true", "FALSE"),
  }),
  fc.record({ field: fc.constant("fields.score"), op: fc.constantFrom(...opsOf("number", "none")) }),
  fc.record({ field: fc.constant("fields.born"), op: fc.constantFrom(...opsOf("date", "none")) }),
  fc.record({ field: fc.constant("fields.vip"), op: fc.constantFrom(...opsOf("boolean", "none")) }),
  fc.record({
    field: fc.constant("audience"),
    op: fc.constantFrom(...FILTER_OPERATORS.audience),
    value: fc.constantFrom("a", "b"),
  }),
) as fc.Arbitrary<Filter>;

const WORDS = ["Acme", "acme", "ACME Labs", "labs", "ärger", "ÄRGER", "a", "", "me", "x@acme.io", "X@Acme.IO"];
const plainMember: fc.Arbitrary<PlainMember> = fc.record({
  id: fc.constantFrom("m1", "M1", "acme", "Ärger"),
  email: fc.option(fc.constantFrom("x@acme.io", "Y@Beta.org", "me@acme.io"), { nil: null }),
  alternativeEmails: fc.subarray(["X@ACME.io", "z@labs.io"]),
  fields: fc.record(
    {
      company: fc.constantFrom(...WORDS),
      role: fc.constantFrom(...WORDS),
      toString: fc.constantFrom(...WORDS),
      score: fc.constantFrom("9", "10", "10.0", "1e1", "-1.5", "100", "0", "-0", ""),
      born: fc.constantFrom(...BORN, ""),
      vip: fc.constantFrom("true", "TRUE", "False", "false", ""),
    },
    { requiredKeys: [] },
  ),
  createdAt: fc.constantFrom(
    new Date("2026-01-01T00:00:00.000Z"),
    new Date("2026-06-01T12:00:00.000Z"),
    new Date("2026-02-28T12:00:00.000Z"),
    new Date("2026-03-31T12:00:00.000Z"),
  ),
});
const condition: fc.Arbitrary<Filter> = fc.oneof(
  fc.record({
    field: fc.constantFrom(
      "id",
      "email",
      "anyEmail",
      "fields.company",
      "fields.role",
      "fields.nothing",
      "fields.toString",
    ),
    op: fc.constantFrom(...opsOf("string", "one")),
    value: fc.constantFrom(...WORDS, "m1", "ACME.IO", "@"),
  }) as fc.Arbitrary<Filter>,
  fc.record({
    field: fc.constantFrom("id", "anyEmail", "fields.company", "fields.nothing"),
    op: fc.constantFrom(...opsOf("string", "list")),
    value: fc.subarray([...WORDS, "M1", "X@ACME.io"], { minLength: 1 }),
  }) as fc.Arbitrary<Filter>,
  fc.record({
    field: fc.constantFrom("email", "anyEmail", "fields.company", "fields.role", "fields.constructor"),
    op: fc.constantFrom(...opsOf("string", "none")),
  }) as fc.Arbitrary<Filter>,
  fc.record({
    field: fc.constant("createdAt"),
    op: fc.constantFrom("before", "after"),
    value: fc.constantFrom("2026-01-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z", "2026-06-01T12:00:00.000Z"),
  }) as fc.Arbitrary<Filter>,
  typedCondition,
  typedCondition,
);
const filter = fc.letrec<{ f: Filter }>((tie) => ({
  f: fc.oneof(
    { depthSize: "small" },
    condition,
    fc.record({ all: fc.array(tie("f"), { minLength: 1, maxLength: 3 }) }) as fc.Arbitrary<Filter>,
    fc.record({ any: fc.array(tie("f"), { minLength: 1, maxLength: 3 }) }) as fc.Arbitrary<Filter>,
    fc.record({ not: tie("f") }) as fc.Arbitrary<Filter>,
  ),
})).f;

describe("matches", () => {
  const context = { types: new Map(), now: 0, inAudience: () => false };
  const holds = (f: Filter | null, m: PlainMember) => matches(f, foldMember(m), new Date(m.createdAt), context);

  it("agrees with the reference evaluator on every condition and combination", () => {
    const types = new Map(Object.entries(TYPES));
    fc.assert(
      fc.property(
        fc.option(filter, { nil: null, freq: 20 }),
        fc.array(plainMember, { minLength: 4, maxLength: 4 }),
        fc.constantFrom(...NOW),
        fc.record({ a: fc.subarray(AUDIENCE_IDS), b: fc.subarray(AUDIENCE_IDS) }),
        (f, members, now, audiences) => {
          // The service evaluates the filter as parseFilter normalized it; the reference reads it as sent.
          const parsed = f === null ? null : parseFilter(f, { types });
          const inAudience = (id: string, m: PlainMember) => audiences[id as "a" | "b"].includes(m.id);
          for (const m of members) {
            const context = { types, now, inAudience: (id: string) => inAudience(id, m) };
            expect(matches(parsed, foldMember(m), new Date(m.createdAt), context)).toBe(
              referenceMatches(f, m, { types: TYPES, now, inAudience }),
            );
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it("tells the string operators apart, whatever the property test happens to draw", () => {
    const m: PlainMember = {
      id: "m",
      email: null,
      alternativeEmails: [],
      fields: { company: "ACME Labs" },
      createdAt: new Date(0),
    };
    const on = (op: string, value: string) => holds(cond("fields.company", op, value) as Filter, m);
    expect([on("startsWith", "acme"), on("endsWith", "acme"), on("contains", "acme"), on("eq", "acme")]).toEqual([
      true,
      false,
      true,
      false,
    ]);
    expect([on("startsWith", "labs"), on("endsWith", "labs"), on("contains", "e l"), on("ne", "acme labs")]).toEqual([
      false,
      true,
      true,
      false,
    ]);
  });

  it("finds only a member's own fields, not the properties every object has", () => {
    const m: PlainMember = { id: "m", email: null, alternativeEmails: [], fields: {}, createdAt: new Date(0) };
    expect(holds(cond("fields.constructor", "exists") as Filter, m)).toBe(false);
    expect(holds(cond("fields.toString", "contains", "x") as Filter, m)).toBe(false);
    expect(holds(cond("fields.toString", "eq", "x") as Filter, { ...m, fields: { toString: "X" } })).toBe(true);
  });

  it("matches nobody without a filter, and compares times strictly", () => {
    const m: PlainMember = {
      id: "m",
      email: null,
      alternativeEmails: [],
      fields: {},
      createdAt: "2026-01-01T00:00:00.000Z",
    };
    expect(holds(null, m)).toBe(false);
    expect(holds(cond("createdAt", "before", "2026-01-01T00:00:00.000Z") as Filter, m)).toBe(false);
    expect(holds(cond("createdAt", "after", "2026-01-01T00:00:00.000Z") as Filter, m)).toBe(false);
    expect(holds(cond("createdAt", "after", "2025-12-31T23:59:59.999Z") as Filter, m)).toBe(true);
  });
});

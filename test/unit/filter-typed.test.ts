// parseFilter on typed fields, relative time and audience conditions (issue 30); the string
// language and the structural limits are in filter.test.ts.
import { describe, expect, it } from "vitest";
import type { FieldType } from "../../src/domain/field-types.ts";
import { kindOf, parseFilter } from "../../src/features/membership/rules/filter.ts";
import { detailOf, refusalOf } from "../support/filter-refusal.ts";

const TYPES = new Map<string, FieldType>([
  ["score", "number"],
  ["born", "date"],
  ["vip", "boolean"],
  ["plan", "string"],
]);
const parse = (input: unknown) => parseFilter(input, { types: TYPES });
const cond = (field: string, op: string, value?: unknown) =>
  value === undefined ? { field, op } : { field, op, value };

const refusal = (input: unknown) => refusalOf(parse, input);

const O = "/body/filter/op";
const V = "/body/filter/value";
const NUMBER = 'must be a number such as "42", "-3.5" or "1e3" (at most 64 characters)';
const DATE =
  'must be a date ("2026-01-31") or a date and time with an offset ("2026-01-31T09:00:00Z"), in the years 0001 to 9999';
const BOOLEAN = 'must be "true" or "false"';
const STRING = "must be a string of at most 1,024 characters, without NUL";
const LIST = "must be a list of 1 to 100 strings of at most 1,024 characters";
const PAIR = "must be [low, high]";
const ORDER = "must be [low, high] with low at most high";
const DURATION = "must be an ISO 8601 duration (P30D, PT12H, P1Y2M) of at most 10 years";
const AUDIENCE = "must be an audience's id";
const NUMBER_OPS = "eq, ne, gt, gte, lt, lte, between, in, notIn, exists, notExists";
const DATE_OPS = "before, after, gt, gte, lt, lte, between, withinLast, notWithinLast, exists, notExists";
const STRING_OPS = "eq, ne, contains, startsWith, endsWith, in, notIn, exists, notExists";

describe("kindOf", () => {
  it("reads the declared type of a custom field; every other field has its own kind", () => {
    expect(kindOf("fields.score", TYPES)).toBe("number");
    expect(kindOf("fields.born", TYPES)).toBe("date");
    expect(kindOf("fields.vip", TYPES)).toBe("boolean");
    expect(kindOf("fields.other", TYPES)).toBe("string");
    expect(kindOf("createdAt", TYPES)).toBe("createdAt");
    expect(kindOf("audience", TYPES)).toBe("audience");
    expect(kindOf("email", TYPES)).toBe("string");
    // A built-in field is never typed, even when a custom key of its name (or of its tail) is.
    expect(kindOf("score", TYPES)).toBe("string");
    const tails = new Map<string, FieldType>([
      ["l", "number"],
      ["", "date"],
    ]);
    expect(kindOf("anyEmail", tails)).toBe("string");
    expect(kindOf("email", tails)).toBe("string");
  });
});

describe("parseFilter accepts typed conditions, normalized", () => {
  it("numbers as they were written, with every number operator", () => {
    for (const op of ["eq", "ne", "gt", "gte", "lt", "lte"]) {
      expect(parse(cond("fields.score", op, "10.0"))).toStrictEqual(cond("fields.score", op, "10.0"));
    }
    expect(parse(cond("fields.score", "eq", "-1e3"))).toStrictEqual(cond("fields.score", "eq", "-1e3"));
    expect(parse(cond("fields.score", "in", ["1", "2.5", ".5"]))).toStrictEqual(
      cond("fields.score", "in", ["1", "2.5", ".5"]),
    );
    expect(parse(cond("fields.score", "notIn", ["7"]))).toStrictEqual(cond("fields.score", "notIn", ["7"]));
    expect(parse(cond("fields.score", "exists"))).toStrictEqual(cond("fields.score", "exists"));
    expect(parse(cond("fields.score", "notExists"))).toStrictEqual(cond("fields.score", "notExists"));
  });

  it("between numbers ordered by value, including a range of one", () => {
    expect(parse(cond("fields.score", "between", ["9", "10"]))).toStrictEqual(
      cond("fields.score", "between", ["9", "10"]),
    );
    expect(parse(cond("fields.score", "between", ["10", "1e1"]))).toStrictEqual(
      cond("fields.score", "between", ["10", "1e1"]),
    );
    expect(parse(cond("fields.score", "between", ["-5", "-4.5"]))).toStrictEqual(
      cond("fields.score", "between", ["-5", "-4.5"]),
    );
  });

  it("dates as ISO instants: a date alone is UTC midnight, an offset is its UTC instant", () => {
    const cases: [string, string][] = [
      ["2026-01-31", "2026-01-31T00:00:00.000Z"],
      ["2026-01-31T09:00:00+02:00", "2026-01-31T07:00:00.000Z"],
      ["2026-01-31t09:00z", "2026-01-31T09:00:00.000Z"],
      ["2026-01-31T23:30:00-01:00", "2026-02-01T00:30:00.000Z"],
      ["0050-01-01", "0050-01-01T00:00:00.000Z"],
      ["0001-01-01", "0001-01-01T00:00:00.000Z"],
      ["9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"],
      ["2024-02-29", "2024-02-29T00:00:00.000Z"],
    ];
    for (const [sent, kept] of cases) {
      for (const op of ["before", "after", "gt", "gte", "lt", "lte"]) {
        expect(parse(cond("fields.born", op, sent))).toStrictEqual(cond("fields.born", op, kept));
      }
      expect(parse(cond("createdAt", "after", sent))).toStrictEqual(cond("createdAt", "after", kept));
    }
  });

  it("between dates, normalized, equal instants in any form included", () => {
    expect(parse(cond("fields.born", "between", ["2026-01-01", "2026-01-01T01:00:00+01:00"]))).toStrictEqual(
      cond("fields.born", "between", ["2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z"]),
    );
    expect(parse(cond("createdAt", "between", ["2025-12-31T23:00:00-02:00", "2026-02-01"]))).toStrictEqual(
      cond("createdAt", "between", ["2026-01-01T01:00:00.000Z", "2026-02-01T00:00:00.000Z"]),
    );
  });

  it("createdAt, as before, as any ISO 8601 timestamp with an offset that JavaScript reads", () => {
    expect(parse(cond("createdAt", "after", "2026-01-31T09:00:00.123456Z"))).toStrictEqual(
      cond("createdAt", "after", "2026-01-31T09:00:00.123Z"),
    );
    expect(
      parse(cond("createdAt", "between", ["2026-01-31T09:00:00.5+01:00", "2026-01-31T09:00:00.987654-01:00"])),
    ).toStrictEqual(cond("createdAt", "between", ["2026-01-31T08:00:00.500Z", "2026-01-31T10:00:00.987Z"]));
    // The same timestamps are no values of a date field, whose every form PostgreSQL reads alike.
    expect(refusal(cond("fields.born", "after", "2026-01-31T09:00:00.123456Z"))).toMatchObject({
      pointer: V,
      message: DATE,
    });
    // A timestamp JavaScript reads but that does not start as ISO 8601 does is refused.
    expect(refusal(cond("createdAt", "after", "2026-01-31 09:00:00Z"))).toMatchObject({ pointer: V, message: DATE });
    expect(refusal(cond("createdAt", "after", "2026-01-31T09:00:00.123456Q"))).toMatchObject({
      pointer: V,
      message: DATE,
    });
  });

  it("durations for withinLast and notWithinLast, in upper case", () => {
    for (const field of ["fields.born", "createdAt"]) {
      expect(parse(cond(field, "withinLast", "p30d"))).toStrictEqual(cond(field, "withinLast", "P30D"));
      expect(parse(cond(field, "notWithinLast", "PT12H"))).toStrictEqual(cond(field, "notWithinLast", "PT12H"));
      expect(parse(cond(field, "withinLast", "P10Y"))).toStrictEqual(cond(field, "withinLast", "P10Y"));
      expect(parse(cond(field, "withinLast", "p1y2mt3h"))).toStrictEqual(cond(field, "withinLast", "P1Y2MT3H"));
    }
  });

  it("booleans in lower case", () => {
    expect(parse(cond("fields.vip", "eq", "TRUE"))).toStrictEqual(cond("fields.vip", "eq", "true"));
    expect(parse(cond("fields.vip", "eq", "False"))).toStrictEqual(cond("fields.vip", "eq", "false"));
    expect(parse(cond("fields.vip", "exists"))).toStrictEqual(cond("fields.vip", "exists"));
  });

  it("a declared string field as any undeclared one, its values untouched", () => {
    expect(parse(cond("fields.plan", "contains", "Pro"))).toStrictEqual(cond("fields.plan", "contains", "Pro"));
    expect(parse(cond("fields.plan", "eq", "10.0"))).toStrictEqual(cond("fields.plan", "eq", "10.0"));
  });

  it("audience conditions naming an id", () => {
    expect(parse(cond("audience", "in", "aud_1"))).toStrictEqual(cond("audience", "in", "aud_1"));
    expect(parse(cond("audience", "notIn", "A-z_09"))).toStrictEqual(cond("audience", "notIn", "A-z_09"));
    const longest = "a".repeat(128);
    expect(parse(cond("audience", "in", longest))).toStrictEqual(cond("audience", "in", longest));
    expect(parse({ all: [cond("audience", "in", "x"), { not: cond("audience", "in", "y") }] })).toStrictEqual({
      all: [cond("audience", "in", "x"), { not: cond("audience", "in", "y") }],
    });
  });
});

describe("parseFilter refuses typed conditions, pointing at the bad node", () => {
  it.each([
    [
      "a string operator on a number",
      cond("fields.score", "contains", "1"),
      O,
      `must be one of ${NUMBER_OPS} for fields.score (a number)`,
    ],
    [
      "before on a number",
      cond("fields.score", "before", "1"),
      O,
      `must be one of ${NUMBER_OPS} for fields.score (a number)`,
    ],
    ["eq on a date", cond("fields.born", "eq", "2026-01-31"), O, `must be one of ${DATE_OPS} for fields.born (a date)`],
    [
      "in on a date",
      cond("fields.born", "in", ["2026-01-31"]),
      O,
      `must be one of ${DATE_OPS} for fields.born (a date)`,
    ],
    [
      "ne on a boolean",
      cond("fields.vip", "ne", "true"),
      O,
      "must be one of eq, exists, notExists for fields.vip (a boolean)",
    ],
    [
      "in on a boolean",
      cond("fields.vip", "in", ["true"]),
      O,
      "must be one of eq, exists, notExists for fields.vip (a boolean)",
    ],
    [
      "gt on a declared string",
      cond("fields.plan", "gt", "1"),
      O,
      `must be one of ${STRING_OPS} for fields.plan (a string)`,
    ],
    [
      "gt on an undeclared field",
      cond("fields.other", "gt", "1"),
      O,
      `must be one of ${STRING_OPS} for fields.other (a string)`,
    ],
    ["withinLast on a string field", cond("email", "withinLast", "P1D"), O, `must be one of ${STRING_OPS} for email`],
    [
      "exists on createdAt",
      cond("createdAt", "exists"),
      O,
      "must be one of before, after, gt, gte, lt, lte, between, withinLast, notWithinLast for createdAt",
    ],
    ["eq on audience", cond("audience", "eq", "aud_1"), O, "must be one of in, notIn for audience"],
    ["exists on audience", cond("audience", "exists"), O, "must be one of in, notIn for audience"],
    ["a number that is not one", cond("fields.score", "eq", "ten"), V, NUMBER],
    ["an empty number", cond("fields.score", "gt", ""), V, NUMBER],
    ["a number too large for both readers", cond("fields.score", "lt", "1e100"), V, NUMBER],
    ["a number of 65 characters", cond("fields.score", "eq", `1${"0".repeat(64)}`), V, NUMBER],
    ["a number given as a number", cond("fields.score", "eq", 10), V, STRING],
    ["a number of 1,025 characters", cond("fields.score", "eq", "1".repeat(1025)), V, STRING],
    ["a number in a list that is not one", cond("fields.score", "in", ["1", "x"]), "/body/filter/value/1", NUMBER],
    ["in of numbers given as numbers", cond("fields.score", "notIn", [1]), V, LIST],
    ["a date without an offset", cond("fields.born", "after", "2026-01-31T09:00:00"), V, DATE],
    ["a date that is no day", cond("fields.born", "after", "2026-02-30"), V, DATE],
    ["a date of the year 0000", cond("fields.born", "after", "0000-06-01"), V, DATE],
    ["a date after 9999 by its offset", cond("fields.born", "before", "9999-12-31T23:59:59.999-00:01"), V, DATE],
    ["a date before 0001 by its offset", cond("fields.born", "before", "0001-01-01T00:00:00+00:01"), V, DATE],
    ["a date given as a number", cond("fields.born", "before", 20260131), V, STRING],
    ["a boolean that is not one", cond("fields.vip", "eq", "yes"), V, BOOLEAN],
    ["a boolean given as a boolean", cond("fields.vip", "eq", true), V, STRING],
    ["between of one value", cond("fields.score", "between", "5"), V, PAIR],
    ["between of a list of one", cond("fields.score", "between", ["5"]), V, PAIR],
    ["between of a list of three", cond("fields.score", "between", ["1", "2", "3"]), V, PAIR],
    ["between without a value", cond("fields.born", "between"), V, PAIR],
    [
      "between of a low that is not a number",
      cond("fields.score", "between", ["x", "5"]),
      "/body/filter/value/0",
      NUMBER,
    ],
    [
      "between of a high that is not a number",
      cond("fields.score", "between", ["5", "x"]),
      "/body/filter/value/1",
      NUMBER,
    ],
    [
      "between of a high that is not a string",
      cond("fields.score", "between", ["5", 6]),
      "/body/filter/value/1",
      STRING,
    ],
    ["between with low above high", cond("fields.score", "between", ["10", "9"]), V, ORDER],
    ["between with low above high by value", cond("fields.score", "between", ["1e1", "9.99"]), V, ORDER],
    [
      "between of dates with low after high",
      cond("fields.born", "between", ["2026-01-01", "2026-01-01T00:30:00+01:00"]),
      V,
      ORDER,
    ],
    ["between of createdAt with low after high", cond("createdAt", "between", ["2026-02-01", "2026-01-31"]), V, ORDER],
    ["between of a bad date", cond("fields.born", "between", ["2026-01-01", "soon"]), "/body/filter/value/1", DATE],
    ["a duration of zero", cond("fields.born", "withinLast", "P0D"), V, DURATION],
    ["a duration over ten years", cond("createdAt", "notWithinLast", "P10Y1D"), V, DURATION],
    ["a duration that is a date", cond("fields.born", "withinLast", "2026-01-01"), V, DURATION],
    ["a duration that is a number", cond("fields.born", "withinLast", 30), V, DURATION],
    ["a duration missing", cond("createdAt", "withinLast"), V, DURATION],
    ["a duration in a list", cond("createdAt", "withinLast", ["P1D"]), V, DURATION],
    ["a value for exists on a number", cond("fields.score", "exists", "1"), V, "must be absent for exists"],
    [
      "a value for notExists on a date",
      cond("fields.born", "notExists", "2026-01-01"),
      V,
      "must be absent for notExists",
    ],
    ["an empty audience id", cond("audience", "in", ""), V, AUDIENCE],
    ["an audience id with a space", cond("audience", "in", "aud 1"), V, AUDIENCE],
    ["an audience id of 129 characters", cond("audience", "notIn", "a".repeat(129)), V, AUDIENCE],
    ["an audience id in a list", cond("audience", "in", ["aud_1"]), V, AUDIENCE],
    ["no audience id", cond("audience", "in"), V, AUDIENCE],
    ["an audience id with text after a line", cond("audience", "in", "aud_1\nx"), V, AUDIENCE],
  ])("%s", (_case, input, pointer, message) => {
    expect(refusal(input)).toEqual({
      code: "invalid_filter",
      detail: detailOf(input, pointer, message),
      pointer,
      message,
    });
  });

  it("inside combinators, at the condition's own pointer", () => {
    expect(refusal({ all: [cond("fields.score", "exists"), { not: cond("fields.vip", "eq", "1") }] })).toEqual({
      code: "invalid_filter",
      detail: `/body/filter/all/1/not/value ${BOOLEAN} (the condition on fields.vip)`,
      pointer: "/body/filter/all/1/not/value",
      message: BOOLEAN,
    });
  });

  it("by the workspace's types: the same condition is fine on an undeclared field", () => {
    expect(() => parseFilter(cond("fields.score", "contains", "1"), { types: new Map() })).not.toThrow();
    expect(() => parseFilter(cond("fields.score", "gt", "1"), { types: new Map() })).toThrow();
  });
});

import { describe, expect, it } from "vitest";
import {
  FIELD_TYPES,
  fitsType,
  parseBoolean,
  parseDate,
  parseNumber,
  TYPE_FORMS,
  typeOf,
} from "../../src/domain/field-types.ts";

// The instant of an ISO timestamp with its offset, read by the engine's own parser (which reads
// a four-digit year literally, unlike Date.UTC).
const at = (iso: string) => Date.parse(iso);

describe("field types", () => {
  it("are the four of the contract, and a key without a declaration is a string", () => {
    expect(FIELD_TYPES).toEqual(["string", "number", "date", "boolean"]);
    const types = new Map([["score", "number" as const]]);
    expect(typeOf(types, "score")).toBe("number");
    expect(typeOf(types, "plan")).toBe("string");
  });

  it("describe each type's values for error messages", () => {
    expect(TYPE_FORMS).toEqual({
      string: "any text",
      number: 'a number such as "42", "-3.5" or "1e3" (at most 64 characters)',
      date: 'a date ("2026-01-31") or a date and time with an offset ("2026-01-31T09:00:00Z")',
      boolean: '"true" or "false"',
    });
  });
});

describe("parseNumber", () => {
  it.each([
    ["42", 42],
    ["-3.5", -3.5],
    ["+3.5", 3.5],
    ["1e3", 1000],
    ["1E3", 1000],
    ["1e+3", 1000],
    ["1e-3", 0.001],
    ["2.5e-2", 0.025],
    [".5", 0.5],
    ["-.5", -0.5],
    ["5.", 5],
    ["007", 7],
    ["10.0", 10],
    ["1e99", 1e99],
    ["-1E-99", -1e-99],
    ["0", 0],
  ])("reads %s as %d", (text, value) => {
    expect(parseNumber(text)).toBe(value);
  });

  it("reads a negative zero as zero, as PostgreSQL's comparisons do", () => {
    expect(parseNumber("-0")).toBe(0);
    expect(Object.is(parseNumber("-0.0e5"), 0)).toBe(true);
  });

  it("takes 64 characters but not 65", () => {
    expect(parseNumber(`1${"0".repeat(63)}`)).toBe(1e63);
    expect(parseNumber(`1${"0".repeat(64)}`)).toBeUndefined();
    expect(parseNumber(`0.${"0".repeat(61)}5`)).toBe(5e-62);
  });

  it.each([
    "",
    "abc",
    " 1",
    "1 ",
    "1,5",
    "1_000",
    "1.2.3",
    "--1",
    "+-1",
    ".",
    "-",
    "e3",
    "1e",
    "1e+",
    "1e3.5",
    "1e100",
    "1e-100",
    "0x10",
    "Infinity",
    "-Infinity",
    "NaN",
    "１",
  ])("refuses %j", (text) => {
    expect(parseNumber(text)).toBeUndefined();
  });
});

describe("parseDate", () => {
  it.each([
    ["2026-01-31", "2026-01-31T00:00:00.000Z"],
    ["2026-01-31T09:00:00Z", "2026-01-31T09:00:00.000Z"],
    ["2026-01-31t09:00:00z", "2026-01-31T09:00:00.000Z"],
    ["2026-01-31T09:00Z", "2026-01-31T09:00:00.000Z"],
    ["2026-01-31T09:15:30.5Z", "2026-01-31T09:15:30.500Z"],
    ["2026-01-31T09:15:30.05Z", "2026-01-31T09:15:30.050Z"],
    ["2026-01-31T09:15:30.123Z", "2026-01-31T09:15:30.123Z"],
    ["2026-01-31T09:00:00+02:00", "2026-01-31T07:00:00.000Z"],
    ["2026-01-31T01:00:00+02:30", "2026-01-30T22:30:00.000Z"],
    ["2026-01-31T22:00:00-05:30", "2026-02-01T03:30:00.000Z"],
    ["2026-01-31T09:00:00+00:00", "2026-01-31T09:00:00.000Z"],
    ["2026-01-31T09:00:00-00:00", "2026-01-31T09:00:00.000Z"],
    ["2026-01-31T12:00:00+15:00", "2026-01-30T21:00:00.000Z"],
    ["2026-01-31T12:00:00+01:59", "2026-01-31T10:01:00.000Z"],
    ["2026-12-31T23:59:59.999Z", "2026-12-31T23:59:59.999Z"],
    ["2024-02-29", "2024-02-29T00:00:00.000Z"],
    ["2000-02-29", "2000-02-29T00:00:00.000Z"],
    ["2026-04-30", "2026-04-30T00:00:00.000Z"],
    ["2026-01-01", "2026-01-01T00:00:00.000Z"],
    ["0001-01-01", "0001-01-01T00:00:00.000Z"],
    ["9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"],
  ])("reads %s as %s", (text, iso) => {
    expect(parseDate(text)).toBe(at(iso));
  });

  it("reads the years below 100 as themselves, not as 19xx", () => {
    expect(parseDate("0050-01-01")).toBe(at("0050-01-01T00:00:00.000Z"));
    expect(new Date(parseDate("0050-01-01") as number).getUTCFullYear()).toBe(50);
    expect(new Date(parseDate("0099-12-31T23:00:00Z") as number).toISOString()).toBe("0099-12-31T23:00:00.000Z");
  });

  it("reads a date alone as the UTC midnight that a UTC timestamp of it names", () => {
    expect(parseDate("2026-06-15")).toBe(parseDate("2026-06-15T00:00:00Z"));
    expect(parseDate("2026-06-15")).toBe(parseDate("2026-06-15T02:00:00+02:00"));
  });

  it.each([
    ["no offset", "2026-01-31T09:00:00"],
    ["an hour alone", "2026-01-31T09Z"],
    ["a space for T", "2026-01-31 09:00:00Z"],
    ["four decimals", "2026-01-31T09:00:00.1234Z"],
    ["a decimal point alone", "2026-01-31T09:00:00.Z"],
    ["an offset without minutes", "2026-01-31T09:00:00+02"],
    ["an offset without a colon", "2026-01-31T09:00:00+0200"],
    ["an offset of 16 hours", "2026-01-31T09:00:00+16:00"],
    ["an offset of 60 minutes", "2026-01-31T09:00:00+01:60"],
    ["one-digit month", "2026-1-31"],
    ["a two-digit year", "26-01-31"],
    ["a signed year", "+2026-01-31"],
    ["a five-digit year", "12026-01-31"],
    ["the year 0000", "0000-01-01"],
    ["month 00", "2026-00-10"],
    ["month 13", "2026-13-01"],
    ["day 00", "2026-01-00"],
    ["day 32", "2026-01-32"],
    ["31 April", "2026-04-31"],
    ["29 February of a common year", "2026-02-29"],
    ["29 February 2100", "2100-02-29"],
    ["hour 24", "2026-01-31T24:00:00Z"],
    ["minute 60", "2026-01-31T09:60:00Z"],
    ["second 60", "2026-01-31T09:00:60Z"],
    ["text around it", "x2026-01-31"],
    ["text after it", "2026-01-31x"],
    ["a slash date", "2026/01/31"],
    ["words", "31 January 2026"],
    ["nothing", ""],
  ])("refuses %s (%s)", (_case, text) => {
    expect(parseDate(text)).toBeUndefined();
  });

  it("keeps the last second of a day, minute and hour", () => {
    expect(parseDate("2026-01-31T23:59:59Z")).toBe(at("2026-01-31T23:59:59.000Z"));
  });
});

describe("parseBoolean", () => {
  it.each([
    ["true", true],
    ["TRUE", true],
    ["True", true],
    ["false", false],
    ["FALSE", false],
    ["fAlSe", false],
  ])("reads %s as %s", (text, value) => {
    expect(parseBoolean(text)).toBe(value);
  });

  it.each(["", "yes", "no", "1", "0", "t", "f", " true", "true ", "truex"])("refuses %j", (text) => {
    expect(parseBoolean(text)).toBeUndefined();
  });
});

describe("fitsType", () => {
  it("takes an empty value for every type: it is no value", () => {
    for (const type of FIELD_TYPES) expect(fitsType(type, "")).toBe(true);
  });

  it("takes any text as a string", () => {
    expect(fitsType("string", "anything at all")).toBe(true);
    expect(fitsType("string", "true")).toBe(true);
  });

  it.each([
    ["number", "-3.5", true],
    ["number", "1e3", true],
    ["number", "three", false],
    ["number", "true", false],
    ["number", "2026-01-31", false],
    ["date", "2026-01-31", true],
    ["date", "2026-01-31T09:00:00+02:00", true],
    ["date", "2026-01-31T09:00:00", false],
    ["date", "42", false],
    ["date", "true", false],
    ["boolean", "TRUE", true],
    ["boolean", "false", true],
    ["boolean", "yes", false],
    ["boolean", "1", false],
  ] as const)("%s %j: %s", (type, text, fits) => {
    expect(fitsType(type, text)).toBe(fits);
  });
});

import { describe, expect, it } from "vitest";
import { type Duration, durationBefore, MAX_DURATION_DAYS, parseDuration } from "../../src/domain/durations.ts";

const ZERO: Duration = { years: 0, months: 0, weeks: 0, days: 0, hours: 0, minutes: 0, seconds: 0 };
const d = (parts: Partial<Duration>): Duration => ({ ...ZERO, ...parts });
const ms = Date.parse;
const iso = (instant: number) => new Date(instant).toISOString();

describe("parseDuration", () => {
  it.each([
    ["P30D", { days: 30 }],
    ["PT12H", { hours: 12 }],
    ["P1Y2M", { years: 1, months: 2 }],
    ["P1M", { months: 1 }],
    ["PT1M", { minutes: 1 }],
    ["P2W", { weeks: 2 }],
    ["PT45S", { seconds: 45 }],
    ["P1Y2M3W4DT5H6M7S", { years: 1, months: 2, weeks: 3, days: 4, hours: 5, minutes: 6, seconds: 7 }],
    ["P1DT1S", { days: 1, seconds: 1 }],
    ["P0Y1D", { days: 1 }],
  ])("reads %s", (text, parts) => {
    expect(parseDuration(text)).toEqual(d(parts));
  });

  it("reads every part of several digits, up to its most", () => {
    expect(parseDuration("P10Y")).toEqual(d({ years: 10 }));
    expect(parseDuration("P00010Y")).toEqual(d({ years: 10 }));
    expect(parseDuration("P00120M")).toEqual(d({ months: 120 }));
    expect(parseDuration("P00521W")).toEqual(d({ weeks: 521 }));
    expect(parseDuration("P003652D")).toEqual(d({ days: 3652 }));
    expect(parseDuration("PT0087660H")).toEqual(d({ hours: 87660 }));
    expect(parseDuration("PT005259600M")).toEqual(d({ minutes: 5259600 }));
    expect(parseDuration("PT0315576000S")).toEqual(d({ seconds: 315576000 }));
  });

  it.each(["P000001Y", "P000001M", "P000001W", "P0000001D", "PT00000001H", "PT0000000001M", "PT00000000001S"])(
    "refuses %s: a part of too many digits",
    (text) => {
      expect(parseDuration(text)).toBeUndefined();
    },
  );

  it("takes ten years of 365.25 days in any unit, and not a second more", () => {
    expect(MAX_DURATION_DAYS).toBe(3652.5);
    const exactly = ["P10Y", "P120M", "P9Y12M", "P3652DT12H", "P521W5DT12H", "PT87660H", "PT5259600M", "PT315576000S"];
    for (const text of exactly) expect(parseDuration(text), text).toBeDefined();
    expect(parseDuration("P3652DT11H59M60S")).toBeDefined();
    const over = [
      "P11Y",
      "P121M",
      "P9Y13M",
      "P10Y1M",
      "P522W",
      "P521W6D",
      "P3653D",
      "P3652DT13H",
      "P3652DT12H1M",
      "P3652DT12H1S",
      "P3652DT11H59M61S",
      "PT87661H",
      "PT5259601M",
      "PT315576001S",
    ];
    for (const text of over) expect(parseDuration(text), text).toBeUndefined();
  });

  it.each([
    ["nothing", ""],
    ["P alone", "P"],
    ["PT alone", "PT"],
    ["a trailing T", "P1DT"],
    ["zero", "P0D"],
    ["zero time", "PT0S"],
    ["zeros everywhere", "P0Y0M0W0DT0H0M0S"],
    ["lower case", "p30d"],
    ["a fraction", "P1.5D"],
    ["a sign", "P-1D"],
    ["no P", "30D"],
    ["parts out of order", "P1D1Y"],
    ["a time part without T", "P1H"],
    ["a date part after T", "PT1D"],
    ["a unit without digits", "PY1D"],
    ["text before it", "xP1D"],
    ["text after it", "P1Dx"],
    ["a space", "P1D "],
    ["a repeated part", "P1D1D"],
  ])("refuses %s (%j)", (_case, text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe("durationBefore", () => {
  const back = (now: string, text: string) => iso(durationBefore(ms(now), parseDuration(text) as Duration));

  it("moves months on the UTC calendar, keeping the day and the time of day", () => {
    expect(back("2026-05-15T10:20:30.456Z", "P1M")).toBe("2026-04-15T10:20:30.456Z");
    expect(back("2026-05-15T10:20:30.456Z", "P1Y2M")).toBe("2025-03-15T10:20:30.456Z");
    expect(back("2026-01-31T08:00:00.000Z", "P1M")).toBe("2025-12-31T08:00:00.000Z");
    expect(back("2026-01-15T00:00:00.000Z", "P25M")).toBe("2023-12-15T00:00:00.000Z");
    expect(back("2026-03-01T00:00:00.000Z", "P10Y")).toBe("2016-03-01T00:00:00.000Z");
  });

  it("clamps a day past the end of the shorter month to its last day, in leap years and not", () => {
    expect(back("2024-03-31T12:00:00.000Z", "P1M")).toBe("2024-02-29T12:00:00.000Z");
    expect(back("2023-03-31T12:00:00.000Z", "P1M")).toBe("2023-02-28T12:00:00.000Z");
    expect(back("2024-02-29T00:00:00.000Z", "P1Y")).toBe("2023-02-28T00:00:00.000Z");
    expect(back("2028-02-29T00:00:00.000Z", "P4Y")).toBe("2024-02-29T00:00:00.000Z");
    expect(back("2000-03-31T00:00:00.000Z", "P1M")).toBe("2000-02-29T00:00:00.000Z");
    expect(back("2100-03-31T00:00:00.000Z", "P1M")).toBe("2100-02-28T00:00:00.000Z");
    expect(back("2024-03-30T00:00:00.000Z", "P1M")).toBe("2024-02-29T00:00:00.000Z");
    expect(back("2024-03-29T00:00:00.000Z", "P1M")).toBe("2024-02-29T00:00:00.000Z");
    expect(back("2024-03-28T00:00:00.000Z", "P1M")).toBe("2024-02-28T00:00:00.000Z");
  });

  // From 31 December back 1 to 12 months: every month's length, in a leap year and in a common one.
  it.each([
    [1, "11-30", "11-30"],
    [2, "10-31", "10-31"],
    [3, "09-30", "09-30"],
    [4, "08-31", "08-31"],
    [5, "07-31", "07-31"],
    [6, "06-30", "06-30"],
    [7, "05-31", "05-31"],
    [8, "04-30", "04-30"],
    [9, "03-31", "03-31"],
    [10, "02-29", "02-28"],
    [11, "01-31", "01-31"],
  ])("from 31 December less %i months: %s in 2024, %s in 2023", (months, leap, common) => {
    expect(back("2024-12-31T06:00:00.000Z", `P${months}M`)).toBe(`2024-${leap}T06:00:00.000Z`);
    expect(back("2023-12-31T06:00:00.000Z", `P${months}M`)).toBe(`2023-${common}T06:00:00.000Z`);
  });

  it("keeps the years below 100 as themselves", () => {
    expect(back("0050-03-31T00:00:00.000Z", "P1M")).toBe("0050-02-28T00:00:00.000Z");
    expect(back("0048-03-31T00:00:00.000Z", "P1M")).toBe("0048-02-29T00:00:00.000Z");
    expect(back("0051-01-15T00:00:00.000Z", "P1Y")).toBe("0050-01-15T00:00:00.000Z");
  });

  it("counts weeks, days and time as fixed lengths", () => {
    expect(back("2026-03-29T12:00:00.000Z", "P1W")).toBe("2026-03-22T12:00:00.000Z");
    expect(back("2026-03-01T12:00:00.000Z", "P1D")).toBe("2026-02-28T12:00:00.000Z");
    expect(back("2026-03-01T00:00:00.000Z", "PT12H")).toBe("2026-02-28T12:00:00.000Z");
    expect(back("2026-03-01T00:00:00.000Z", "PT90M")).toBe("2026-02-28T22:30:00.000Z");
    expect(back("2026-03-01T00:00:00.000Z", "PT45S")).toBe("2026-02-28T23:59:15.000Z");
    expect(back("2026-03-10T00:00:00.000Z", "P1W2DT3H4M5S")).toBe("2026-02-28T20:55:55.000Z");
    expect(durationBefore(0, d({ weeks: 1, days: 2, hours: 3, minutes: 4, seconds: 5 }))).toBe(
      -((9 * 86_400 + 3 * 3600 + 4 * 60 + 5) * 1000),
    );
  });

  it("moves months first, then the fixed lengths", () => {
    // 31 March less a month is 29 February, less a day 28 February (not 30 March less a month).
    expect(back("2024-03-31T00:00:00.000Z", "P1M1D")).toBe("2024-02-28T00:00:00.000Z");
    expect(back("2024-03-31T00:00:00.000Z", "P1MT1H")).toBe("2024-02-28T23:00:00.000Z");
    expect(back("2024-05-31T00:00:00.000Z", "P1Y1M1W")).toBe("2023-04-23T00:00:00.000Z");
  });
});

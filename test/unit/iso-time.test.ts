import { describe, expect, it } from "vitest";
import { isoOfMs } from "../../src/domain/iso-time.ts";

describe("isoOfMs", () => {
  it("writes what toISOString writes, on the same day and across days, years and leap days", () => {
    const instants = [
      0, 1, 999, 1_000, 59_999, 3_599_999, 86_399_999, 86_400_000, 951_782_400_000, 951_868_799_999, 1_764_440_642_720,
      1_764_440_642_721, 1_764_527_042_005, 253_402_300_799_999,
    ];
    for (const ms of instants) expect(isoOfMs(ms)).toBe(new Date(ms).toISOString());
  });

  it("writes instants before 1970 or after 9999 as toISOString does, and fails as it does", () => {
    for (const ms of [-1, -86_400_001, 253_402_300_800_000, 1.5]) expect(isoOfMs(ms)).toBe(new Date(ms).toISOString());
    expect(() => isoOfMs(Number.NaN)).toThrow(RangeError);
  });
});

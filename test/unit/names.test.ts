import { describe, expect, it } from "vitest";
import { AppError } from "../../src/domain/errors.ts";
import { nameKey, normalizeName } from "../../src/domain/names.ts";

describe("audience names", () => {
  it("are stored trimmed", () => {
    expect(normalizeName("  Weekly readers \t")).toBe("Weekly readers");
  });

  it.each([
    ["empty", ""],
    ["only white space", "   "],
    ["longer than 200 characters", "x".repeat(201)],
    ["holding a control character", "tab\u0007bell"],
  ])("are rejected when %s", (_case, name) => {
    expect(() => normalizeName(name)).toThrowError(AppError);
    try {
      normalizeName(name);
    } catch (error) {
      expect((error as AppError).code).toBe("invalid_request");
      expect((error as AppError).errors?.[0]?.pointer).toBe("/body/name");
    }
  });

  it("accepts exactly 200 characters", () => {
    expect(normalizeName("y".repeat(200))).toHaveLength(200);
  });

  it("compare case-insensitively and across Unicode composition forms", () => {
    expect(nameKey("Beta Testers")).toBe(nameKey("BETA testers"));
    expect(nameKey("Caf\u00e9")).toBe(nameKey("Cafe\u0301"));
    expect(nameKey("Beta")).not.toBe(nameKey("Beta 2"));
  });
});

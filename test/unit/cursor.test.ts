import { describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor } from "../../src/domain/cursor.ts";
import type { AppError } from "../../src/domain/errors.ts";

const position = { createdAt: new Date("2026-11-21T09:40:00.123Z"), id: "mem_1003" };

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return (error as AppError).code;
  }
  return undefined;
}

describe("cursors", () => {
  it("round-trip a position within their listing", () => {
    const cursor = encodeCursor("aud_1", position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor("aud_1", cursor, "after")).toEqual(position);
  });

  it("keep ids with any characters intact", () => {
    const odd = { createdAt: position.createdAt, id: "crm:42/é 🎉" };
    expect(decodeCursor("aud_1", encodeCursor("aud_1", odd), "before")).toEqual(odd);
  });

  it("are refused by another listing", () => {
    expect(codeOf(() => decodeCursor("aud_2", encodeCursor("aud_1", position), "after"))).toBe("invalid_cursor");
  });

  it.each([
    ["not base64url", "***"],
    ["not JSON", Buffer.from("hello").toString("base64url")],
    ["missing the id", Buffer.from(JSON.stringify({ s: "aud_1", t: 1 })).toString("base64url")],
    ["a time out of range", Buffer.from(JSON.stringify({ s: "aud_1", t: -8.64e15, i: "m" })).toString("base64url")],
    ["a fractional time", Buffer.from(JSON.stringify({ s: "aud_1", t: 1.5, i: "m" })).toString("base64url")],
    ["an id with a NUL", Buffer.from(JSON.stringify({ s: "aud_1", t: 1, i: "a\u0000" })).toString("base64url")],
    ["an array", Buffer.from("[1,2]").toString("base64url")],
  ])("are invalid_cursor when %s", (_case, cursor) => {
    expect(codeOf(() => decodeCursor("aud_1", cursor, "after"))).toBe("invalid_cursor");
  });
});

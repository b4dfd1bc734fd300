import { describe, expect, it } from "vitest";
import { decodeCursor, decodeSequenceCursor, encodeCursor, encodeSequenceCursor } from "../../src/domain/cursor.ts";
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

  it("are refused as they were sent: the same problem for every forgery, naming the parameter", () => {
    try {
      decodeCursor("aud_1", "***", "before");
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({
        status: 400,
        code: "invalid_cursor",
        detail: "before is not a cursor issued by this listing.",
        errors: [{ pointer: "/query/before", message: "is not a cursor issued by this listing" }],
      });
    }
  });
});

// Each check of a cursor's body, at its boundary: the forgery one past it is refused and the body
// at it, which differs only there, is accepted (so the case is refused by the check it names).
const MAX_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
const body = (fields: Record<string, unknown>) =>
  Buffer.from(JSON.stringify({ s: "members:ws_1", t: 0, i: "m", ...fields })).toString("base64url");

describe("cursor bodies at and past each limit", () => {
  it.each([
    ["a time after the year 9999", { t: MAX_TIME }, { t: MAX_TIME + 1 }],
    ["a time before 1970", { t: 0 }, { t: -1 }],
    ["a time as text", { t: 5 }, { t: "5" }],
    ["a fractional time", { t: 2 }, { t: 2.5 }],
    ["a time past the safe integers", { t: 0 }, { t: 2 ** 53 }],
    ["an id of 256 characters", { i: "m".repeat(255) }, { i: "m".repeat(256) }],
    ["an empty id", { i: "m" }, { i: "" }],
    ["an id that is a number", { i: "7" }, { i: 7 }],
    ["an id with a NUL", { i: "a b" }, { i: "a\u0000b" }],
    ["another listing's scope", { s: "members:ws_1" }, { s: "members:ws_2" }],
    ["a bare scope", { s: "members:ws_1" }, { s: "members" }],
  ])("%s is refused; the body at the limit is not", (_case, at, past) => {
    const atLimit = decodeCursor("members:ws_1", body(at), "after");
    expect(atLimit).toEqual({
      createdAt: new Date((at as { t?: number }).t ?? 0),
      id: (at as { i?: string }).i ?? "m",
    });
    expect(codeOf(() => decodeCursor("members:ws_1", body(past), "after"))).toBe("invalid_cursor");
  });

  it("a body that is JSON null, a number or a string is refused", () => {
    for (const text of ["null", "7", '"members:ws_1"', "true"]) {
      expect(codeOf(() => decodeCursor("members:ws_1", Buffer.from(text).toString("base64url"), "after"))).toBe(
        "invalid_cursor",
      );
      expect(codeOf(() => decodeSequenceCursor("events:ws_1", Buffer.from(text).toString("base64url"), "after"))).toBe(
        "invalid_cursor",
      );
    }
  });

  it("a cursor with a character outside base64url is refused before it is decoded", () => {
    // Buffer.from(…, "base64url") skips such characters: without the check this would decode.
    const valid = body({});
    expect(codeOf(() => decodeCursor("members:ws_1", `${valid.slice(0, 4)}.${valid.slice(4)}`, "after"))).toBe(
      "invalid_cursor",
    );
    expect(codeOf(() => decodeCursor("members:ws_1", `${valid}=`, "after"))).toBe("invalid_cursor");
  });
});

describe("sequence cursors (the event feed)", () => {
  it("round-trip a place, from 0, within their scope only", () => {
    expect(decodeSequenceCursor("events:ws_1", encodeSequenceCursor("events:ws_1", 0), "after")).toBe(0);
    expect(decodeSequenceCursor("events:ws_1", encodeSequenceCursor("events:ws_1", 41), "after")).toBe(41);
    expect(codeOf(() => decodeSequenceCursor("events:ws_2", encodeSequenceCursor("events:ws_1", 41), "after"))).toBe(
      "invalid_cursor",
    );
  });

  it.each([
    ["-1", -1],
    ["1.5", 1.5],
    ["a string", "3"],
    ["past the safe integers", 2 ** 53],
    ["missing", undefined],
  ])("refuse a place that is %s", (_case, q) => {
    const cursor = Buffer.from(JSON.stringify({ s: "events:ws_1", q })).toString("base64url");
    expect(codeOf(() => decodeSequenceCursor("events:ws_1", cursor, "after"))).toBe("invalid_cursor");
  });
});

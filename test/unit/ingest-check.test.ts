// The check of an ingest's entries (src/features/activities/ingest-check.ts): the contract's
// ActivityInput plus what it cannot state, each bad entry refused with a pointer at its bad part.
import { describe, expect, it } from "vitest";
import { AppError } from "../../src/domain/errors.ts";
import { createIngestCheck, MAX_AHEAD_MS, MAX_ENTRY_BYTES } from "../../src/features/activities/ingest-check.ts";

const NOW = Date.UTC(2026, 10, 29, 12);
const check = createIngestCheck();

const refusal = (entry: unknown) => {
  try {
    check([{ memberId: "ok", type: "t" }, entry], NOW);
  } catch (error) {
    if (error instanceof AppError) return { code: error.code, pointer: error.errors?.[0]?.pointer };
    throw error;
  }
  throw new Error("accepted");
};

describe("ingest check", () => {
  it("takes the time of arrival when occurredAt is absent, and stores no empty properties", () => {
    const [entry] = check([{ email: "a@example.com", type: "signup", properties: {} }], NOW);
    expect(entry).toEqual({
      id: undefined,
      memberId: undefined,
      email: "a@example.com",
      type: "signup",
      occurredAt: new Date(NOW),
      properties: null,
    });
  });

  it("reads an occurredAt with an offset as the instant it names", () => {
    const [entry] = check([{ memberId: "m", type: "t", occurredAt: "2026-11-29T13:00:00+01:00" }], NOW);
    expect(entry?.occurredAt.toISOString()).toBe("2026-11-29T12:00:00.000Z");
  });

  it("accepts five minutes ahead of the clock, and refuses a millisecond more", () => {
    const at = (ms: number) => new Date(NOW + ms).toISOString();
    expect(check([{ memberId: "m", type: "t", occurredAt: at(MAX_AHEAD_MS) }], NOW)).toHaveLength(1);
    expect(refusal({ memberId: "m", type: "t", occurredAt: at(MAX_AHEAD_MS + 1) })).toEqual({
      code: "invalid_activity",
      pointer: "/body/activities/1/occurredAt",
    });
  });

  it("points at the bad part of the first bad entry", () => {
    expect(refusal({ memberId: "m", type: "" }).pointer).toBe("/body/activities/1/type");
    expect(refusal({ memberId: "m", type: "t", properties: { ok: [1] } }).pointer).toBe(
      "/body/activities/1/properties/ok",
    );
    expect(refusal({ memberId: "m", type: "t", id: "" }).pointer).toBe("/body/activities/1/id");
    expect(refusal({ memberId: "m", type: "t", email: "not an address" }).pointer).toBe("/body/activities/1/email");
    expect(refusal("not an object").pointer).toBe("/body/activities/1");
  });

  it("takes 50 properties, and refuses 51", () => {
    const properties = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
    expect(check([{ memberId: "m", type: "t", properties: properties(50) }], NOW)).toHaveLength(1);
    expect(refusal({ memberId: "m", type: "t", properties: properties(51) }).pointer).toBe(
      "/body/activities/1/properties",
    );
  });

  it("takes an entry of exactly 4 KiB as JSON in UTF-8, escapes and multi-byte text counted, and refuses a byte more", () => {
    // "é" is 2 bytes, "\n" 2 once escaped: the entry's size is the size of its JSON, not of its text.
    const sized = (bytes: number) => {
      // Values of at most 1,000 characters: nine of them, the last one filling up to `bytes`.
      const properties: Record<string, string> = {};
      const entry = { memberId: "m", type: "t", properties };
      for (let i = 0; i < 8; i++) properties[`k${i}`] = "é\n".repeat(100);
      properties.last = "";
      properties.last = "x".repeat(bytes - Buffer.byteLength(JSON.stringify(entry)));
      expect(Buffer.byteLength(JSON.stringify(entry))).toBe(bytes);
      return entry;
    };
    expect(check([sized(MAX_ENTRY_BYTES)], NOW)).toHaveLength(1);
    expect(refusal(sized(MAX_ENTRY_BYTES + 1)).pointer).toBe("/body/activities/1");
  });
});

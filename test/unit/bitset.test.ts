import { describe, expect, it } from "vitest";
import { setBitPositions } from "../../src/features/membership/bitset.ts";

describe("setBitPositions", () => {
  // 0b1000_0001, 0, 0b0100_0000: bits 0 and 7 of byte 0, bit 1 of byte 2 (most significant first).
  const bytes = Uint8Array.from([0x81, 0x00, 0x40]);

  it("counts from the most significant bit of the first byte, as PostgreSQL's get_bit does", () => {
    expect([...setBitPositions(bytes, false)]).toEqual([0, 7, 17]);
  });

  it("walks backwards when asked", () => {
    expect([...setBitPositions(bytes, true)]).toEqual([17, 7, 0]);
  });

  it("finds nothing in empty or all-zero input, and every bit of a full byte", () => {
    expect([...setBitPositions(new Uint8Array(0), false)]).toEqual([]);
    expect([...setBitPositions(new Uint8Array(1024), true)]).toEqual([]);
    expect([...setBitPositions(Uint8Array.from([0xff]), false)]).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it("starts at a given position, in either direction, and yields nothing from outside the string", () => {
    expect([...setBitPositions(bytes, false, 7)]).toEqual([7, 17]);
    expect([...setBitPositions(bytes, false, 8)]).toEqual([17]);
    expect([...setBitPositions(bytes, true, 16)]).toEqual([7, 0]);
    expect([...setBitPositions(bytes, true, 6)]).toEqual([0]);
    expect([...setBitPositions(bytes, false, 24)]).toEqual([]);
    expect([...setBitPositions(bytes, true, -1)]).toEqual([]);
  });
});

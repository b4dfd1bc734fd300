import { describe, expect, it } from "vitest";
import {
  CHUNK_BITS,
  countDelta,
  memberSetOf,
  membersOf,
  seqRange,
  sizeOf,
} from "../../src/features/membership/member-set.ts";

describe("member sets", () => {
  it("hold member numbers in chunks of 8,192 bits, most significant bit first", () => {
    const set = memberSetOf([0, 9, CHUNK_BITS - 1, CHUNK_BITS]);
    expect([...set.keys()]).toEqual([0, 1]);
    expect(set.get(0)?.length).toBe(CHUNK_BITS / 8);
    expect([...(set.get(0) as Uint8Array).subarray(0, 2)]).toEqual([0x80, 0x40]);
    expect((set.get(0) as Uint8Array)[CHUNK_BITS / 8 - 1]).toBe(0x01);
    expect((set.get(1) as Uint8Array)[0]).toBe(0x80);
  });

  it("give their numbers back ascending, whatever the order of their chunks", () => {
    const numbers = [3 * CHUNK_BITS + 5, 7, 2 * CHUNK_BITS, 10 * CHUNK_BITS + 1, 7, 8];
    expect(membersOf(memberSetOf(numbers))).toEqual([7, 8, 2 * CHUNK_BITS, 3 * CHUNK_BITS + 5, 10 * CHUNK_BITS + 1]);
  });

  it("count their members, every bit of every byte", () => {
    const all = Array.from({ length: 300 }, (_, i) => i * 3);
    expect(sizeOf(memberSetOf(all))).toBe(300);
    expect(sizeOf(memberSetOf(Array.from({ length: 256 }, (_, i) => i)))).toBe(256);
    expect(sizeOf(memberSetOf([]))).toBe(0);
    expect(countDelta({ entered: memberSetOf([1, 2, 3]), left: memberSetOf([CHUNK_BITS]) })).toBe(2);
    expect(countDelta({ entered: memberSetOf([]), left: memberSetOf([4, 5]) })).toBe(-2);
  });
});

describe("seqRange", () => {
  it("gives the lowest and highest number, in any order, of one or of 131,072", () => {
    expect(seqRange([7])).toEqual([7, 7]);
    expect(seqRange([5, 2, 9, 3])).toEqual([2, 9]);
    expect(seqRange([9, 5, 2])).toEqual([2, 9]);
    const many = Array.from({ length: 16 * 8192 }, (_, i) => 200_000 - i);
    expect(seqRange(many)).toEqual([200_000 - 16 * 8192 + 1, 200_000]);
  });
});

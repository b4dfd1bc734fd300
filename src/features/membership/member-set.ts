import type { components } from "../../../generated/api.d.ts";
import { setBitPositions } from "./bitset.ts";

/**
 * A set of member numbers (members.seq) as the store keeps it: chunks of CHUNK_BITS bits, where
 * bit i of chunk c stands for member number c × CHUNK_BITS + i, counted from the most significant
 * bit of the first byte (PostgreSQL's get_bit order). Chunks without a member are absent.
 */
export type MemberSet = ReadonlyMap<number, Uint8Array>;

export const CHUNK_BITS = 8192;
export const CHUNK_SHIFT = 13;
const CHUNK_BYTES = CHUNK_BITS / 8;

export const EMPTY_SET: MemberSet = new Map();

/** The set of these member numbers. */
export function memberSetOf(numbers: Iterable<number>): MemberSet {
  const chunks = new Map<number, Uint8Array>();
  for (const n of numbers) {
    const chunk = n >> CHUNK_SHIFT;
    let bytes = chunks.get(chunk);
    if (!bytes) {
      bytes = new Uint8Array(CHUNK_BYTES);
      chunks.set(chunk, bytes);
    }
    const bit = n & (CHUNK_BITS - 1);
    bytes[bit >> 3] = (bytes[bit >> 3] as number) | (0x80 >> (bit & 7));
  }
  return chunks;
}

/** The member numbers of a set, ascending. */
export function membersOf(set: MemberSet): number[] {
  const numbers: number[] = [];
  for (const chunk of [...set.keys()].sort((a, b) => a - b)) {
    for (const bit of setBitPositions(set.get(chunk) as Uint8Array, false)) numbers.push(chunk * CHUNK_BITS + bit);
  }
  return numbers;
}

/** How many members a set holds. */
export function sizeOf(set: MemberSet): number {
  let count = 0;
  for (const bytes of set.values()) for (const byte of bytes) count += BITS_IN_BYTE[byte] as number;
  return count;
}

const BITS_IN_BYTE = Uint8Array.from({ length: 256 }, (_, byte) => {
  let n = 0;
  for (let b = byte; b > 0; b >>= 1) n += b & 1;
  return n;
});

/** Why an audience's members changed; the event feed publishes it with the change. */
export type ChangeReason = components["schemas"]["AudienceMembersChangedEvent"]["data"]["reason"];

/** Who entered and who left one audience in one write. */
export interface MembershipChange {
  audienceId: string;
  reason: ChangeReason;
  entered: MemberSet;
  left: MemberSet;
}

/**
 * The membership rule: a member of an audience is one added by hand, or one its rule matches that
 * was not removed by hand (member-bits-sql.ts's memberBits is the same rule on chunks, in SQL).
 */
export const isMember = (included: boolean, matched: boolean, excluded: boolean): boolean =>
  included || (matched && !excluded);

/** How much a change moves the audience's member count. */
export const countDelta = (change: Pick<MembershipChange, "entered" | "left">): number =>
  sizeOf(change.entered) - sizeOf(change.left);

/**
 * The lowest and highest of some member numbers. A loop, not Math.min(...seqs): spreading a
 * relay pass's 131,072 numbers as arguments overflows the stack.
 */
export function seqRange(seqs: readonly number[]): [number, number] {
  let low = Number.POSITIVE_INFINITY;
  let high = Number.NEGATIVE_INFINITY;
  for (const seq of seqs) {
    if (seq < low) low = seq;
    if (seq > high) high = seq;
  }
  return [low, high];
}

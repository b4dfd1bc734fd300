/**
 * Positions of the set bits of a bit string held as bytes, most significant bit first (PostgreSQL's
 * bit-string order: position 0 is the high bit of byte 0), ascending or descending, starting at
 * position `from` (the first in the scan's direction; outside the string: none).
 */
export function* setBitPositions(
  bytes: Uint8Array,
  descending: boolean,
  from = descending ? bytes.length * 8 - 1 : 0,
): Generator<number> {
  const step = descending ? -1 : 1;
  const first = from >> 3;
  // Stryker disable next-line EqualityOperator: equivalent, bytes[bytes.length] is undefined and yields no bit
  for (let i = first; i >= 0 && i < bytes.length; i += step) {
    const byte = bytes[i] as number;
    // Stryker disable next-line ConditionalExpression: equivalent, a zero byte yields no bit (this only skips it faster)
    if (byte === 0) continue;
    // Stryker disable next-line EqualityOperator: equivalent, 0x80 >> 8 is 0 and yields no bit
    for (let bit = i === first ? from & 7 : descending ? 7 : 0; bit >= 0 && bit < 8; bit += step) {
      if (byte & (0x80 >> bit)) yield i * 8 + bit;
    }
  }
}

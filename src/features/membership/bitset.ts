/**
 * Positions of the set bits of a bit string held as bytes, most significant bit first (PostgreSQL's
 * bit-string order: position 0 is the high bit of byte 0), ascending or descending.
 */
export function* setBitPositions(bytes: Uint8Array, descending: boolean): Generator<number> {
  const step = descending ? -1 : 1;
  // Stryker disable next-line EqualityOperator: equivalent, bytes[bytes.length] is undefined and yields no bit
  for (let i = descending ? bytes.length - 1 : 0; i >= 0 && i < bytes.length; i += step) {
    const byte = bytes[i] as number;
    // Stryker disable next-line ConditionalExpression: equivalent, a zero byte yields no bit (this only skips it faster)
    if (byte === 0) continue;
    // Stryker disable next-line EqualityOperator: equivalent, 0x80 >> 8 is 0 and yields no bit
    for (let bit = descending ? 7 : 0; bit >= 0 && bit < 8; bit += step) {
      if (byte & (0x80 >> bit)) yield i * 8 + bit;
    }
  }
}

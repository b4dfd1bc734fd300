const LINE_FEED = 0x0a;
const QUOTE = 0x22;

/**
 * Counts the records of a file as its bytes stream past, chunk by chunk. In CSV a line break
 * inside a quoted value does not end a record: the counter keeps whether it is inside quotes
 * across chunks (an escaped quote, `""`, closes and reopens, so the parity stays right). NDJSON
 * has no raw line break inside a record, so every line feed ends one.
 */
export function createRecordCounter(format: "csv" | "ndjson") {
  let lineEnds = 0;
  let quoted = false;
  let endsWithLineFeed = true;

  const countLineFeeds = (chunk: Uint8Array, from: number, to: number) => {
    for (let at = chunk.indexOf(LINE_FEED, from); at !== -1 && at < to; at = chunk.indexOf(LINE_FEED, at + 1)) {
      lineEnds++;
    }
  };

  return {
    add(chunk: Uint8Array): void {
      if (chunk.length === 0) return;
      endsWithLineFeed = chunk[chunk.length - 1] === LINE_FEED;
      if (format === "ndjson") {
        countLineFeeds(chunk, 0, chunk.length);
        return;
      }
      let at = 0;
      while (at < chunk.length) {
        const quote = chunk.indexOf(QUOTE, at);
        const until = quote === -1 ? chunk.length : quote;
        if (!quoted) countLineFeeds(chunk, at, until);
        if (quote === -1) return;
        quoted = !quoted;
        at = quote + 1;
      }
    },
    /** Records so far, the last one counted even without a final line feed. */
    get records(): number {
      return lineEnds + (endsWithLineFeed ? 0 : 1);
    },
  };
}

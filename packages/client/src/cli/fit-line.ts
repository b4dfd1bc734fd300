/**
 * Fitting output to a terminal's width. A terminal cuts or wraps a line wherever its last column
 * falls, which can split an id or a count; these helpers break only between words, and drop the
 * least useful parts of a progress line first. Off a terminal (a log, a pipe) nothing is changed.
 */

/** The columns a line may use on this stream, or undefined off a terminal. */
export function widthOf(stream: NodeJS.WriteStream): number | undefined {
  if (stream.isTTY !== true) return undefined;
  // One column short: a character in the last column leaves some terminals' cursor on the next line.
  return Math.max((stream.columns || 80) - 1, 20);
}

/**
 * The text with each line broken between words so that it fits the width; a word longer than the
 * width (an id, a path) keeps a line of its own, whole. Continuation lines keep the line's indent.
 */
export function wrapWords(text: string, width: number | undefined): string {
  if (width === undefined) return text;
  return text
    .split("\n")
    .map((line) => {
      if (line.length <= width) return line;
      const indent = /^ */.exec(line)?.[0] ?? "";
      const out: string[] = [];
      let current = "";
      for (const word of line.slice(indent.length).split(" ")) {
        const next = current === "" ? indent + word : `${current} ${word}`;
        if (next.length <= width || current === "") current = next;
        else {
          out.push(current);
          current = indent + word;
        }
      }
      out.push(current);
      return out.join("\n");
    })
    .join("\n");
}

export interface ProgressParts {
  label: string;
  /** 0 to 1. */
  progress: number;
  /** "4,010 of ~10,000 rows": never cut. */
  counts: string;
  speed: string;
  etaText: string;
}

const BAR_MAX = 30;
const BAR_MIN = 10;

/**
 * One progress line within the width: the bar narrows first (30 to 10 columns), then the speed
 * goes, then the ETA, then the bar, the percentage and the label; the counts always stay whole.
 */
export function layoutProgress(parts: ProgressParts, width: number): string {
  const percent = `${Math.floor(parts.progress * 100)}%`;
  const eta = `ETA ${parts.etaText}`;
  const withBar = [[parts.counts, parts.speed, eta], [parts.counts, eta], [parts.counts]];
  for (const tail of withBar) {
    const head = `${parts.label} [`;
    const rest = `] ${percent} | ${tail.join(" | ")}`;
    const size = Math.min(BAR_MAX, width - head.length - rest.length);
    if (size >= BAR_MIN) return `${head}${drawBar(parts.progress, size)}${rest}`;
  }
  const plain = [`${parts.label} ${percent} | ${parts.counts}`, `${parts.label} ${parts.counts}`];
  return plain.find((line) => line.length <= width) ?? parts.counts;
}

function drawBar(progress: number, size: number): string {
  const done = Math.min(size, Math.max(0, Math.round(progress * size)));
  return "\u2588".repeat(done) + "\u2591".repeat(size - done);
}

/** Writes a message of whole lines, broken between words to fit the stream's width on a terminal. */
export function writeLines(stream: NodeJS.WriteStream, text: string): void {
  stream.write(`${wrapWords(text.replace(/\n$/, ""), widthOf(stream))}\n`);
}

import { SingleBar } from "cli-progress";
import { layoutProgress, widthOf } from "./fit-line.js";

/** Where a command writes: data and summaries on stdout, progress and notices on stderr. */
export interface Terminal {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
}

/**
 * Progress of one phase (uploading, importing, exporting): a bar redrawn in place with its rate
 * and ETA on a terminal, or plain lines (at most one per interval) where output is a log or a
 * pipe, so CI logs show progress without carriage-return noise.
 */
export interface Progress {
  /** The count so far and, when known better now, the total. */
  update(value: number, total?: number): void;
  /** The final count, which is the total now; closes the bar or prints the last line. */
  done(value?: number): void;
  /** Leaves the bar as it stands (before other output, say); later calls do nothing. */
  stop(): void;
}

export interface ProgressOptions {
  /** What is being done: "uploading", "importing", … */
  label: string;
  /** Rows, or bytes shown as KiB/MiB/GiB. */
  unit: "rows" | "bytes";
  /** The expected total, when known; estimated totals read "~". */
  total?: number | undefined;
  estimated?: boolean;
  stream: NodeJS.WriteStream;
  /** A bar redrawn in place (a terminal) or plain lines. */
  interactive: boolean;
  /** Plain lines: at most one per interval. */
  intervalMs: number;
  now?: () => number;
}

export function createProgress(options: ProgressOptions): Progress {
  const { label, stream, interactive, intervalMs, now = Date.now } = options;
  const started = now();
  let total = options.total;
  let value = 0;
  let printedAt = Number.NEGATIVE_INFINITY;
  let printedValue = -1;

  const describe = () => describeProgress(options.unit, value, total, options.estimated ?? false, now() - started);
  const bar = interactive
    ? new SingleBar({
        stream,
        // Laid out anew at each redraw for the terminal's width as it is then (it may be resized):
        // cli-progress would otherwise cut the line at the last column, in the middle of a count.
        format: (_options, params, payload: ProgressText) =>
          layoutProgress({ label, progress: params.progress, ...payload }, widthOf(stream) ?? 80),
      })
    : undefined;
  bar?.start(Math.max(total ?? 0, 1), 0, describe());

  const printLine = () => {
    const text = describe();
    stream.write(`${label}: ${text.counts}${text.percent}, ${text.speed}, ETA ${text.etaText}\n`);
    printedAt = now();
    printedValue = value;
  };

  let stopped = false;
  return {
    update(next, nextTotal) {
      if (stopped) return;
      value = next;
      if (nextTotal !== undefined) total = nextTotal;
      if (total !== undefined && value > total) total = value;
      if (bar) {
        bar.setTotal(Math.max(total ?? value, 1));
        bar.update(value, describe());
      } else if (now() - printedAt >= intervalMs && value !== printedValue) {
        printLine();
      }
    },
    done(final = value) {
      if (stopped) return;
      value = final;
      total = final;
      if (bar) {
        bar.setTotal(Math.max(final, 1));
        bar.update(final, { ...describe(), etaText: "0s" });
      } else if (value !== printedValue) {
        printLine();
      }
      this.stop();
    },
    stop() {
      if (stopped) return;
      stopped = true;
      bar?.stop();
    },
  };
}

interface ProgressText {
  counts: string;
  /** " (57%)" when the total is known; the bar shows its own. */
  percent: string;
  speed: string;
  etaText: string;
}

function describeProgress(
  unit: "rows" | "bytes",
  value: number,
  total: number | undefined,
  estimated: boolean,
  elapsedMs: number,
): ProgressText {
  const bytes = unit === "bytes";
  const amount = (n: number) => (bytes ? formatBytes(n) : n.toLocaleString("en-US"));
  const rate = elapsedMs > 0 ? (value * 1000) / elapsedMs : 0;
  const known = total !== undefined && total > 0;
  const of = known ? ` of ${estimated ? "~" : ""}${amount(total)}` : "";
  const percent = known ? ` (${Math.floor((100 * value) / total)}%)` : "";
  return {
    counts: `${amount(value)}${of}${bytes ? "" : ` ${plural(known ? total : value, "row")}`}`,
    percent,
    speed: bytes ? `${formatBytes(rate)}/s` : `${Math.round(rate).toLocaleString("en-US")} rows/s`,
    etaText: known && rate > 0 ? formatDuration(Math.max(total - value, 0) / rate) : "?",
  };
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${Math.round(bytes)} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let size = bytes / 1024;
  let index = 0;
  while (size >= 1024 && index < units.length - 1) {
    size /= 1024;
    index++;
  }
  return `${size.toFixed(1)} ${units[index]}`;
}

export function formatDuration(seconds: number): string {
  if (seconds < 1) return "<1s";
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** "1 row", "2 rows": the noun for a count. */
export const plural = (count: number, noun: string) => (count === 1 ? noun : `${noun}s`);

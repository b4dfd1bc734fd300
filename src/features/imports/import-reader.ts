import { finished } from "node:stream/promises";
import { setImmediate as nextTurn } from "node:timers/promises";
import { CsvError, type Options, parse } from "csv-parse";
import { isBlank } from "./import-columns.ts";

/** The longest row (in characters) the reader holds; a longer one ends the job (an unclosed quote?). */
export const MAX_ROW_CHARS = 1_048_576;

/**
 * How every import reads CSV (csv-parse): a byte order mark is dropped; LF and CRLF both end a
 * row; a row may have another number of columns than the header (it is rejected by itself, not
 * the file); a quote inside an unquoted field is kept as a character rather than derailing the
 * rest of the file.
 */
export const CSV_OPTIONS: Options = {
  bom: true,
  record_delimiter: ["\r\n", "\n"],
  relax_column_count: true,
  relax_quotes: true,
  max_record_size: MAX_ROW_CHARS,
};

/** A data row of the file: the line it starts on (the header is line 1, or later after blank lines). */
export interface FileRow {
  line: number;
  values: string[];
}

/** The file cannot be read on from this line on; the rows before it were read. */
export class CsvReadError extends Error {
  override name = "CsvReadError";
  constructor(
    readonly line: number,
    reason: string,
  ) {
    super(`line ${line}: ${reason}`);
  }
}

/** How much of a part csv-parse is given at a time: the rows it holds for the reader stay few. */
const SLICE_BYTES = 65_536;

/**
 * Reads a stored file as it comes, in constant memory: the header row first, then each data row,
 * each with the line it starts on; blank rows are skipped. The parser is fed a slice at a time
 * and hands its rows over as it finds them ('data' events, in order), so that when it fails,
 * every row before the failure has been read and the failure's line is known.
 *
 * csv-parse's own line count is not used: it counts a CRLF inside a quoted field twice. A row
 * instead spans one line more than the line feeds its fields hold (a line feed outside quotes
 * ends the row).
 */
export async function* readCsv(parts: AsyncIterable<Uint8Array>): AsyncGenerator<FileRow, void, undefined> {
  const parser = parse(CSV_OPTIONS);
  const found: string[][] = [];
  parser.on("data", (values: string[]) => found.push(values));
  // A failure is read from parser.errored once the rows before it are taken.
  const ended = finished(parser).catch(() => {});
  let line = 1;
  function* taken(): Generator<FileRow> {
    for (const values of found.splice(0)) {
      const start = line;
      line += 1;
      for (const value of values) line += lineFeeds(value);
      if (!isBlank(values)) yield { line: start, values };
    }
    if (parser.errored) throw readError(parser.errored, line);
  }
  try {
    for await (const part of parts) {
      for (let at = 0; at < part.length; at += SLICE_BYTES) {
        parser.write(part.subarray(at, at + SLICE_BYTES));
        yield* taken();
        // Parsing and an embedded store's queries are all promise callbacks: without a turn of
        // the event loop now and then, a long import would hold every request back until it ends.
        await nextTurn();
      }
    }
    parser.end();
    await ended;
    yield* taken();
  } finally {
    parser.destroy();
  }
}

function readError(error: Error, line: number): Error {
  return error instanceof CsvError ? new CsvReadError(line, reasonOf(error)) : error;
}

function lineFeeds(value: string): number {
  let count = 0;
  for (let at = value.indexOf("\n"); at !== -1; at = value.indexOf("\n", at + 1)) count++;
  return count;
}

function reasonOf(error: CsvError): string {
  switch (error.code) {
    case "CSV_QUOTE_NOT_CLOSED":
      return "a quoted field is not closed before the end of the file";
    case "CSV_MAX_RECORD_SIZE":
      return `a row longer than ${MAX_ROW_CHARS.toLocaleString("en-US")} characters (is a quote not closed?)`;
    default:
      return error.message;
  }
}

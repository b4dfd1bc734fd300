import { finished } from "node:stream/promises";
import { setImmediate as nextTurn } from "node:timers/promises";
import { CsvError, type Options, parse } from "csv-parse";
import type { components } from "../../../generated/api.d.ts";
import { assertNever } from "../../domain/assert-never.ts";
import { invalidCsv } from "../../domain/errors.ts";
import { type ActivityColumn, readActivityHeader } from "./activity-columns.ts";
import { type Column, isBlank, readHeader } from "./import-columns.ts";

export type ImportKind = components["schemas"]["ImportKind"];

/** The columns of a file, read as its kind says. */
export type FileHeader = { kind: "members"; columns: Column[] } | { kind: "activities"; columns: ActivityColumn[] };

/** The most bytes (UTF-8) a row's cells may hold; a longer row is rejected by itself. */
export const MAX_ROW_BYTES = 1_048_576;

/**
 * How every import reads CSV, the upload's check as much as the job (csv-parse): one byte order
 * mark is dropped (a second is text of the first cell); LF and CRLF both end a row; a row may
 * have another number of columns than the header (it is rejected by itself, not the file); a
 * quote inside an unquoted field is kept as a character rather than derailing the rest of the
 * file. No max_record_size: csv-parse would stop at a long row (and with skip_records_with_error
 * it drops the rest of the slice it was given); readCsv bounds rows itself.
 */
const CSV_OPTIONS: Options = {
  bom: true,
  record_delimiter: ["\r\n", "\n"],
  relax_column_count: true,
  relax_quotes: true,
};

/** A data row of the file: the line it starts on (the header is line 1, or later after blank lines). */
export interface FileRow {
  line: number;
  values: string[];
  /** Why the reader already rejects this row (its values are then not kept). */
  rejected?: string;
}

/** Message of a row over MAX_ROW_BYTES. */
export const TOO_LONG = "longer than 1 MiB (1,048,576 bytes; is a quote not closed?)";

/**
 * Put first in the record of a row that grew over MAX_ROW_BYTES, in place of what it held: the
 * row's end is then still found by the parser (so the next row is read where it starts), and the
 * line feeds of what was dropped are counted here (so later rows keep their line numbers).
 */
class Dropped {
  lineFeeds = 0;
}

/** What of csv-parse's parser state the reader reads and trims: the row being read. */
interface RowInProgress {
  record: unknown[];
  record_length: number;
  field: { buf: Buffer; length: number; reset(): void };
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
  const row = (parser as unknown as { state: RowInProgress }).state;
  if (typeof row?.field?.reset !== "function") throw new Error("csv-parse no longer exposes the row being read");
  const found: unknown[][] = [];
  parser.on("data", (values: unknown[]) => found.push(values));
  // A failure is read from parser.errored once the rows before it are taken.
  const ended = finished(parser).catch(() => {});
  let line = 1;
  /** The row being read was found too long: it is rejected at once, before its end is read. */
  let longRow = false;
  /** Drops the row being read if it has grown over the limit; memory then stays bounded by it. */
  function trimLongRow(): void {
    // record_length counts the characters of the cells read, field.length the bytes of the one
    // being read: a row let through here is still bounded (3 bytes a character at most), and is
    // measured in bytes when it ends (taken).
    if (row.record_length + row.field.length <= MAX_ROW_BYTES) return;
    if (bytesOf(row.record) + row.field.length <= MAX_ROW_BYTES) return;
    const first = row.record[0];
    const dropped = first instanceof Dropped ? first : new Dropped();
    if (!(first instanceof Dropped)) longRow = true;
    for (const value of row.record) if (typeof value === "string") dropped.lineFeeds += lineFeeds(value);
    dropped.lineFeeds += row.field.buf.subarray(0, row.field.length).filter((byte) => byte === 0x0a).length;
    row.field.reset();
    row.record = [dropped];
    row.record_length = 0;
  }
  function* taken(): Generator<FileRow> {
    for (const values of found.splice(0)) {
      const start = line;
      line += 1;
      const [first] = values;
      if (first instanceof Dropped) line += first.lineFeeds;
      for (const value of values) if (typeof value === "string") line += lineFeeds(value);
      // A dropped row was rejected when it was found too long; one that ended within the slice
      // that took it over the limit was not trimmed.
      if (first instanceof Dropped) continue;
      if (bytesOf(values) > MAX_ROW_BYTES) yield { line: start, values: [], rejected: TOO_LONG };
      else if (!isBlank(values as string[])) yield { line: start, values: values as string[] };
    }
    // The rows above all came before the one being read: this is where it starts.
    if (longRow) {
      longRow = false;
      yield { line, values: [], rejected: TOO_LONG };
    }
    if (parser.errored) throw readError(parser.errored, line);
  }
  try {
    for await (const part of parts) {
      for (let at = 0; at < part.length; at += SLICE_BYTES) {
        parser.write(part.subarray(at, at + SLICE_BYTES));
        trimLongRow();
        // Parsing and an embedded store's queries are all promise callbacks: without a turn of
        // the event loop now and then, a long import would hold every request back until it ends.
        // Taken after it: every row the slice completed has then been handed over, even if the
        // stream deferred its 'data' event, so a long row's line comes after theirs.
        await nextTurn();
        yield* taken();
      }
    }
    parser.end();
    await ended;
    yield* taken();
  } finally {
    parser.destroy();
  }
}

/**
 * The columns of the file's header, its first row: the one rule by which both the upload's check
 * and the job read it (400 invalid_csv when it cannot be read).
 */
export function headerOf(first: FileRow | undefined, kind: ImportKind): FileHeader {
  if (first === undefined) throw invalidCsv("The file has no header row: it is empty.");
  if (first.rejected !== undefined) throw invalidCsv(`The header row is ${first.rejected}.`);
  switch (kind) {
    case "members":
      return { kind, columns: readHeader(first.values) };
    case "activities":
      return { kind, columns: readActivityHeader(first.values) };
    default:
      return assertNever(kind);
  }
}

function readError(error: Error, line: number): Error {
  return error instanceof CsvError ? new CsvReadError(line, reasonOf(error)) : error;
}

/** The UTF-8 bytes of a row's cells; counted only when its characters may be over the limit. */
function bytesOf(values: unknown[]): number {
  let chars = 0;
  for (const value of values) if (typeof value === "string") chars += value.length;
  // A UTF-16 code unit is at most 3 bytes of UTF-8 (a pair of them, 4).
  if (chars * 3 <= MAX_ROW_BYTES) return chars;
  let bytes = 0;
  for (const value of values) if (typeof value === "string") bytes += Buffer.byteLength(value);
  return bytes;
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
    default:
      return error.message;
  }
}

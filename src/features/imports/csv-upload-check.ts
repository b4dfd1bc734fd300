import { parse } from "csv-parse/sync";
import { invalidCsv } from "../../domain/errors.ts";
import { isBlank, readHeader } from "./import-columns.ts";
import { CSV_OPTIONS, MAX_ROW_CHARS } from "./import-reader.ts";

/**
 * Checks an upload as its bytes arrive, so that a file that cannot be imported is refused
 * (400 invalid_csv) before its job exists: every byte must be UTF-8 (strictly: TextDecoder with
 * `fatal`, which also drops a byte order mark), and the header row must pass readHeader. The rows
 * are not parsed here; the job does that, and rejects bad ones one by one.
 */
export function createUploadCheck() {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let bytes = 0;
  /** Text before the header row's end, while the header has not been read. */
  let pending: string | undefined = "";

  const notUtf8 = () =>
    invalidCsv(
      `The file is not UTF-8: bytes after byte ${bytes.toLocaleString("en-US")} are not valid UTF-8. ` +
        "Save it as CSV UTF-8.",
    );

  /** Reads the first non-blank line as the header, once one is complete (or at the end). */
  function readHeaderFrom(text: string, atEnd: boolean): void {
    let rest = text;
    for (let end = rest.indexOf("\n"); end !== -1 || (atEnd && rest !== ""); end = rest.indexOf("\n")) {
      const line = (end === -1 ? rest : rest.slice(0, end)).replace(/\r$/, "");
      rest = end === -1 ? "" : rest.slice(end + 1);
      const values = headerValues(line);
      if (isBlank(values)) continue;
      readHeader(values);
      pending = undefined;
      return;
    }
    if (rest.length > MAX_ROW_CHARS) throw invalidCsv("The header row is longer than any row may be.");
    pending = rest;
  }

  return {
    push(chunk: Uint8Array): void {
      let text: string;
      try {
        text = decoder.decode(chunk, { stream: true });
      } catch {
        throw notUtf8();
      }
      bytes += chunk.length;
      if (pending !== undefined) readHeaderFrom(pending + text, false);
    },
    /** The whole file has arrived. */
    end(): void {
      let text: string;
      try {
        text = decoder.decode();
      } catch {
        throw notUtf8();
      }
      if (pending !== undefined) readHeaderFrom(pending + text, true);
      if (pending !== undefined) throw invalidCsv("The file has no header row: it is empty.");
    },
  };
}

function headerValues(line: string): string[] {
  try {
    const [values] = parse(line, CSV_OPTIONS) as string[][];
    return values ?? [];
  } catch (error) {
    throw invalidCsv(`The header row is not valid CSV: ${(error as Error).message}`);
  }
}

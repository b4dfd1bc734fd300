import { once } from "node:events";
import { PassThrough } from "node:stream";
import { invalidCsv } from "../../domain/errors.ts";
import { headerOf, type ImportKind, readCsv } from "./import-reader.ts";

/**
 * Checks an upload as its bytes arrive, so that a file that cannot be imported is refused
 * (400 invalid_csv) before its job exists: every byte must be UTF-8 (strictly: TextDecoder with
 * `fatal`), and the header row must pass headerOf. The header is read by the job's own reader
 * (readCsv, fed the same bytes), so the check and the job cannot disagree on it: the same byte
 * order mark rule, quoting and row limit. The rows are not parsed here; the job does that, and
 * rejects bad ones one by one.
 */
export function createUploadCheck(kind: ImportKind) {
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  let bytes = 0;
  /** The bytes for the reader, until the header is read. */
  let input: PassThrough | undefined = new PassThrough();
  let refusal: unknown;
  const rows = readCsv(input);
  const header = rows
    .next()
    .then(
      (first) => {
        headerOf(first.done ? undefined : first.value, kind);
      },
      (error: unknown) => {
        throw invalidCsv(`The header row is not valid CSV: ${(error as Error).message}`);
      },
    )
    .catch((error: unknown) => {
      refusal = error;
    })
    .finally(() => {
      // The header is known: the reader (which stops at its first row) needs no more bytes.
      input?.destroy();
      input = undefined;
      rows.return(undefined).catch(() => {});
    });

  const notUtf8 = () =>
    invalidCsv(
      `The file is not UTF-8: bytes after byte ${bytes.toLocaleString("en-US")} are not valid UTF-8. ` +
        "Save it as CSV UTF-8.",
    );

  return {
    /**
     * The next bytes of the file; refuses them, or a header found before them. Resolves when the
     * reader has room for more, so that a header preceded by many blank lines is not buffered.
     */
    async push(chunk: Uint8Array): Promise<void> {
      if (refusal !== undefined) throw refusal;
      try {
        decoder.decode(chunk, { stream: true });
      } catch {
        throw notUtf8();
      }
      bytes += chunk.length;
      if (input && !input.write(chunk)) await Promise.race([once(input, "drain"), header]);
    },
    /** The whole file has arrived: resolves once its header has been read and passed. */
    async end(): Promise<void> {
      try {
        decoder.decode();
      } catch {
        throw notUtf8();
      }
      input?.end();
      await header;
      if (refusal !== undefined) throw refusal;
    },
  };
}

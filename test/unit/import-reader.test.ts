import { describe, expect, it } from "vitest";
import {
  CsvReadError,
  type FileRow,
  MAX_ROW_BYTES,
  readCsv,
  TOO_LONG,
} from "../../src/features/imports/import-reader.ts";

/** The file in parts of `size` bytes, as the store hands them over (a part may end inside a character). */
async function* partsOf(text: string | Buffer, size: number): AsyncGenerator<Uint8Array> {
  const bytes = typeof text === "string" ? Buffer.from(text) : text;
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

/** Every row read, and the failure that stopped the reading, if any. */
async function read(text: string | Buffer, size = 3): Promise<{ rows: FileRow[]; failure?: string }> {
  const rows: FileRow[] = [];
  try {
    for await (const row of readCsv(partsOf(text, size))) rows.push(row);
  } catch (error) {
    if (!(error instanceof CsvReadError)) throw error;
    return { rows, failure: error.message };
  }
  return { rows };
}

describe("reading a stored CSV file", () => {
  it("gives the header, then each row with the line it starts on, whatever the part boundaries", async () => {
    const text = 'email,note\nada@x.org,"two\nlines"\n\nbob@x.org,"a, b"\ncy@x.org,"say ""hi"""\n';
    for (const size of [1, 2, 7, 1_000]) {
      expect((await read(text, size)).rows, `parts of ${size}`).toEqual([
        { line: 1, values: ["email", "note"] },
        { line: 2, values: ["ada@x.org", "two\nlines"] },
        { line: 5, values: ["bob@x.org", "a, b"] },
        { line: 6, values: ["cy@x.org", 'say "hi"'] },
      ]);
    }
  });

  it("drops a byte order mark and reads CRLF, LF and a last row without a line end alike", async () => {
    const text = '\uFEFFid,n\r\na,"x\r\ny"\r\n\r\nb,2\nc,3';
    expect((await read(text)).rows).toEqual([
      { line: 1, values: ["id", "n"] },
      { line: 2, values: ["a", "x\r\ny"] },
      { line: 5, values: ["b", "2"] },
      { line: 6, values: ["c", "3"] },
    ]);
  });

  it("keeps multi-byte characters split across parts whole", async () => {
    const { rows } = await read("id,name\nm1,Zoë Ångström 日本\n", 1);
    expect(rows[1]?.values).toEqual(["m1", "Zoë Ångström 日本"]);
  });

  it("skips rows of empty cells and keeps rows with another number of columns for the caller to reject", async () => {
    const { rows } = await read("id,a\n,\nm1\nm2,x,y\n");
    expect(rows).toEqual([
      { line: 1, values: ["id", "a"] },
      { line: 3, values: ["m1"] },
      { line: 4, values: ["m2", "x", "y"] },
    ]);
  });

  it("keeps a quote inside an unquoted field as a character", async () => {
    expect((await read('id,n\nm1,5"3\nm2,ok\n')).rows.slice(1)).toEqual([
      { line: 2, values: ["m1", '5"3'] },
      { line: 3, values: ["m2", "ok"] },
    ]);
  });

  it("stops at a quote never closed, after every row before it, naming the line it opens on", async () => {
    expect(await read('id,n\nm1,a\nm2,"never\nclosed\n')).toEqual({
      rows: [
        { line: 1, values: ["id", "n"] },
        { line: 2, values: ["m1", "a"] },
      ],
      failure: "line 3: a quoted field is not closed before the end of the file",
    });
  });

  it("rejects a row longer than any row may be by itself, with its line, and reads on", async () => {
    const long = "x".repeat(MAX_ROW_BYTES + 10);
    // Over the limit within one slice, across slices, and spanning lines in a quoted field.
    const text = `id,n\nm1,a\nm2,${long}\nm3,b\nm4,"${long}\n${long}\nz"\nm5,"c\nd"\nm6,${"y".repeat(70_000)}\n`;
    for (const size of [65_536, 4_000_000]) {
      const { rows, failure } = await read(text, size);
      expect(failure).toBeUndefined();
      expect(rows.map((row) => ({ ...row, values: row.values.map((v) => v.slice(0, 3)) }))).toEqual([
        { line: 1, values: ["id", "n"] },
        { line: 2, values: ["m1", "a"] },
        { line: 3, values: [], rejected: TOO_LONG },
        { line: 4, values: ["m3", "b"] },
        { line: 5, values: [], rejected: TOO_LONG },
        { line: 8, values: ["m5", "c\nd"] },
        { line: 10, values: ["m6", "yyy"] },
      ]);
    }
  });

  it("measures the limit in bytes of UTF-8: a row of 600,000 é (1.2 MB) is too long", async () => {
    const { rows } = await read(`id,n\nm1,${"é".repeat(600_000)}\nm2,${"é".repeat(300_000)}\n`, 65_536);
    expect(rows.map(({ line, rejected }) => ({ line, rejected }))).toEqual([
      { line: 1, rejected: undefined },
      { line: 2, rejected: TOO_LONG },
      { line: 3, rejected: undefined },
    ]);
  });

  it("rejects two long rows in a row each by itself", async () => {
    const long = "x".repeat(MAX_ROW_BYTES + 1);
    const { rows } = await read(`id\n${long}\n${long}\nm1\n`, 65_536);
    expect(rows).toEqual([
      { line: 1, values: ["id"] },
      { line: 2, values: [], rejected: TOO_LONG },
      { line: 3, values: [], rejected: TOO_LONG },
      { line: 4, values: ["m1"] },
    ]);
  });

  it("keeps one byte order mark out of the header, and a second one in it", async () => {
    expect((await read("\uFEFF\uFEFFemail\na@x.org\n")).rows[0]).toEqual({ line: 1, values: ["\uFEFFemail"] });
  });
});

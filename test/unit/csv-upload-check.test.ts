import { describe, expect, it } from "vitest";
import type { AppError } from "../../src/domain/errors.ts";
import { createUploadCheck } from "../../src/features/imports/csv-upload-check.ts";

/** Runs the check over the bytes in pieces of `size`; the refusal's detail, or undefined when accepted. */
async function check(bytes: Uint8Array | string, size = 1): Promise<string | undefined> {
  const data = typeof bytes === "string" ? Buffer.from(bytes) : bytes;
  const upload = createUploadCheck("members");
  try {
    for (let at = 0; at < data.length; at += size) await upload.push(data.subarray(at, at + size));
    await upload.end();
  } catch (error) {
    expect((error as AppError).code).toBe("invalid_csv");
    return (error as AppError).detail;
  }
  return undefined;
}

describe("checking an upload as it arrives", async () => {
  it("accepts UTF-8 whose characters are split between pieces, with or without a byte order mark", async () => {
    for (const size of [1, 2, 3, 64]) {
      expect(await check("email,name\nada@x.org,Zoë 日本\n", size)).toBeUndefined();
      expect(await check("\uFEFFemail\r\nada@x.org\r\n", size)).toBeUndefined();
    }
  });

  it("refuses bytes that are not UTF-8, anywhere in the file", async () => {
    const bytes = (...parts: (string | number[])[]) =>
      Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p))));
    expect(await check(bytes("email\nada@x.org,Caf", [0xe9], "\n"))).toMatch(/not UTF-8/);
    expect(await check(bytes("email\n", [0xc0, 0xaf], "\n"), 64)).toMatch(/not UTF-8/);
    // A character cut off by the end of the file.
    expect(await check(bytes("email\nada@x.org", [0xe6, 0x97]))).toMatch(/not UTF-8/);
  });

  it("reads the header once its line is whole, after blank lines, whatever the pieces", async () => {
    expect(await check("\n\r\n,,\nemail,plan\n", 2)).toBeUndefined();
    expect(await check("email,plan", 3)).toBeUndefined();
    expect(await check("plan\nada@x.org\n", 2)).toMatch(/must name an id or an email column/);
  });

  it("refuses a file without a header row", async () => {
    expect(await check("")).toMatch(/no header row/);
    expect(await check("\n\n,,\r\n")).toMatch(/no header row/);
  });

  it("refuses a header that is not valid CSV, or longer than any row may be", async () => {
    expect(await check('email,"plan\n', 4)).toMatch(/not valid CSV/);
    expect(await check(`email,${"x".repeat(1_100_000)}`, 65_536)).toMatch(/header row is longer/);
  });

  it("reads the header as the job does: one byte order mark dropped, a second kept in the first name", async () => {
    expect(await check("\uFEFFemail\na@x.org\n", 2)).toBeUndefined();
    expect(await check("\uFEFF\uFEFFemail\na@x.org\n", 2)).toMatch(
      /Column 1 of the header, "\\ufeffemail", .* more than one byte order mark\./,
    );
    // A quoted header name may hold a line feed: the job reads one row, so does the check.
    expect(await check('email,"pl\nan"\na@x.org,1\n', 3)).toMatch(/Column 2 of the header, "pl\\nan"/);
  });
});

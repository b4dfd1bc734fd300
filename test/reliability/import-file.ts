import { csvOf } from "../support/imports.ts";

/**
 * The CSV file the import reliability tests upload, and what a user must see once it is imported.
 * Ten chunks of CHUNK_ROWS rows, so that a job can be stopped with chunks behind it and
 * chunks ahead; the bad rows and the duplicates sit on both sides of chunk boundaries, so a chunk
 * applied twice or skipped after a restart shows in the counts, the errors or the members.
 */
export const DATA_ROWS = 50_000;

/** Rows per chunk of the test's server processes (IMPORT_CHUNK_ROWS, set by importStore). */
export const CHUNK_ROWS = 5_000;

/** Data rows (0-based) whose e-mail is not an address: rejected, each with its line. */
const BAD_ROWS = [3, 4_999, 5_000, 12_345, 24_999, 37_000, 49_999];

/**
 * Data rows that repeat an earlier row's e-mail instead of bringing their own: the same data
 * (unchanged), the same data with the address in capitals, in the same chunk (unchanged: e-mails
 * match case-insensitively), and a new company (merged: the member's data changes).
 */
const DUPLICATES = [
  { at: 17_500, of: 2, company: undefined, upperCase: false },
  { at: 41_001, of: 41_000, company: undefined, upperCase: true },
  { at: 31_000, of: 10_000, company: "Changed Ltd", upperCase: false },
];

const emailOf = (row: number) => `user${row}@example.com`;
const companyOf = (row: number) => `Company ${row % 7}`;

export interface ImportFile {
  csv: string;
  /** The job as it must end: its counts and errors. */
  expected: {
    status: "succeeded";
    failureReason: null;
    rowsRead: number;
    created: number;
    merged: number;
    unchanged: number;
    rejected: number;
    errors: { line: number; message: string }[];
  };
  /** The e-mail of every member the file creates, each once. */
  emails: string[];
  /** The one member the file changes after creating it (the duplicate with a new company). */
  mergedEmail: string;
}

export function importFile(): ImportFile {
  const bad = new Set(BAD_ROWS);
  const duplicateAt = new Map(DUPLICATES.map((d) => [d.at, d]));
  const rows: string[][] = [["email", "firstName", "lastName", "company"]];
  const emails: string[] = [];
  for (let row = 0; row < DATA_ROWS; row++) {
    const duplicate = duplicateAt.get(row);
    if (bad.has(row)) {
      rows.push([`not-an-email-${row}`, `First${row}`, `Last${row}`, companyOf(row)]);
    } else if (duplicate) {
      const email = emailOf(duplicate.of);
      rows.push([
        duplicate.upperCase ? email.toUpperCase() : email,
        `First${duplicate.of}`,
        `Last${duplicate.of}`,
        duplicate.company ?? companyOf(duplicate.of),
      ]);
    } else {
      rows.push([emailOf(row), `First${row}`, `Last${row}`, companyOf(row)]);
      emails.push(emailOf(row));
    }
  }
  const merged = DUPLICATES.filter((d) => d.company !== undefined);
  return {
    csv: csvOf(rows),
    expected: {
      status: "succeeded",
      failureReason: null,
      rowsRead: DATA_ROWS,
      created: emails.length,
      merged: merged.length,
      unchanged: DUPLICATES.length - merged.length,
      rejected: BAD_ROWS.length,
      // The header is line 1: data row n is on line n + 2.
      errors: BAD_ROWS.map((row) => ({ line: row + 2, message: "email: not a valid e-mail address" })),
    },
    emails,
    mergedEmail: emailOf(merged[0]?.of ?? -1),
  };
}

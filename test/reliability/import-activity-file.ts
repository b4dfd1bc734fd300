import { csvOf } from "../support/imports.ts";
import { CHUNK_ROWS } from "./import-file.ts";

/**
 * The activity file the import reliability tests upload (kind=activities), and what a user must
 * see once it is imported. As the member file: ten chunks, with bad rows and repeated ids on both
 * sides of chunk boundaries. Rows without an id are stored however often they are applied, so a
 * chunk applied twice shows in the type's count; a chunk skipped shows in the counts.
 */
export const ACTIVITY_ROWS = 10 * CHUNK_ROWS;
const MEMBERS = 2_000;

/** Data rows (0-based) whose type is not a type: rejected, each with its line. */
const BAD_ROWS = [3, 4_999, 5_000, 24_999, 49_999];
/** Data rows that repeat an earlier row's id (a retried activity): counted as duplicates. */
const REPEATS = [
  { at: 5_001, of: 4_998 },
  { at: 17_500, of: 17_498 },
  { at: 40_000, of: 2 },
];

export interface ActivityFile {
  csv: string;
  expected: {
    kind: "activities";
    status: "succeeded";
    rowsRead: number;
    accepted: number;
    duplicates: number;
    expired: number;
    created: number;
    rejected: number;
    errors: { line: number; message: string }[];
  };
  /** How many activities each member has once the file is imported. */
  perMember: Map<string, number>;
}

export function activityFile(): ActivityFile {
  const bad = new Set(BAD_ROWS);
  const repeatOf = new Map(REPEATS.map((r) => [r.at, r.of]));
  const rows: string[][] = [["memberId", "type", "occurredAt", "id", "properties.amount"]];
  const perMember = new Map<string, number>();
  const start = Date.now() - 86_400_000;
  for (let row = 0; row < ACTIVITY_ROWS; row++) {
    const memberId = `m${row % MEMBERS}`;
    const at = new Date(start + row * 1000).toISOString();
    const of = repeatOf.get(row);
    // Every other row has an id; a repeat brings the id of an earlier row that has one.
    const id = of !== undefined ? `a${of}` : row % 2 === 0 ? `a${row}` : "";
    rows.push([memberId, bad.has(row) ? "bad type" : "order.placed", at, id, String(row)]);
    if (!bad.has(row) && of === undefined) perMember.set(memberId, (perMember.get(memberId) ?? 0) + 1);
  }
  const accepted = ACTIVITY_ROWS - BAD_ROWS.length - REPEATS.length;
  return {
    csv: csvOf(rows),
    expected: {
      kind: "activities",
      status: "succeeded",
      rowsRead: ACTIVITY_ROWS,
      accepted,
      duplicates: REPEATS.length,
      expired: 0,
      created: MEMBERS,
      rejected: BAD_ROWS.length,
      errors: BAD_ROWS.map((row) => ({
        line: row + 2,
        message: "type: must be 1 to 100 letters, digits or the characters _ . : -",
      })),
    },
    perMember,
  };
}

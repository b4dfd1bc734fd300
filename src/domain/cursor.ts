import { BadRequestError } from "./errors.ts";

/** A position in a listing ordered by (createdAt, id). */
export interface Position {
  createdAt: Date;
  id: string;
}

// Positions are clamped to years 1970–9999 so a forged cursor never reaches the database as a
// timestamp it cannot represent.
const MAX_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

interface CursorBody {
  s: string; // the listing it belongs to, so a cursor of another listing is refused
  t: number; // createdAt, epoch milliseconds
  i: string; // id
}

export function encodeCursor(scope: string, position: Position): string {
  const body: CursorBody = { s: scope, t: position.createdAt.getTime(), i: position.id };
  return Buffer.from(JSON.stringify(body)).toString("base64url");
}

/** Reads a cursor issued by encodeCursor for the same scope; anything else is invalid_cursor. */
export function decodeCursor(scope: string, cursor: string, parameter: "after" | "before"): Position {
  const body = readCursor(scope, cursor, parameter);
  if (!isCursorBody(body)) throw invalidCursor(parameter);
  return { createdAt: new Date(body.t), id: body.i };
}

function isCursorBody(value: Record<string, unknown>): value is CursorBody & Record<string, unknown> {
  const { t, i } = value;
  return (
    typeof i === "string" &&
    i.length > 0 &&
    i.length <= 255 &&
    !i.includes("\u0000") &&
    Number.isSafeInteger(t) &&
    (t as number) >= 0 &&
    (t as number) <= MAX_TIME
  );
}

/** A cursor at a place in an ordered sequence (the event feed) of one scope. */
export function encodeSequenceCursor(scope: string, sequence: number): string {
  return Buffer.from(JSON.stringify({ s: scope, q: sequence })).toString("base64url");
}

/** Reads a cursor issued by encodeSequenceCursor for the same scope; anything else is invalid_cursor. */
export function decodeSequenceCursor(scope: string, cursor: string, parameter: string): number {
  const { q } = readCursor(scope, cursor, parameter);
  if (!Number.isSafeInteger(q) || (q as number) < 0) throw invalidCursor(parameter);
  return q as number;
}

const invalidCursor = (parameter: string) =>
  new BadRequestError("invalid_cursor", `${parameter} is not a cursor issued by this listing.`, [
    { pointer: `/query/${parameter}`, message: "is not a cursor issued by this listing" },
  ]);

/** The JSON object a cursor of this scope carries; anything else is invalid_cursor. */
function readCursor(scope: string, cursor: string, parameter: string): Record<string, unknown> {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalidCursor(parameter);
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    // Not JSON: the body stays undefined, which the scope check below refuses.
  }
  // Anything but an object (null included) has no `s` equal to the scope.
  if ((body as { s?: unknown } | null)?.s !== scope) throw invalidCursor(parameter);
  return body as Record<string, unknown>;
}

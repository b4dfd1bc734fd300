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
  return Buffer.from(JSON.stringify(body), "utf8").toString("base64url");
}

/** Reads a cursor issued by encodeCursor for the same scope; anything else is invalid_cursor. */
export function decodeCursor(scope: string, cursor: string, parameter: "after" | "before"): Position {
  const invalid = () =>
    new BadRequestError("invalid_cursor", `${parameter} is not a cursor issued by this listing.`, [
      { pointer: `/query/${parameter}`, message: "is not a cursor issued by this listing" },
    ]);
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalid();
  }
  if (!isCursorBody(body) || body.s !== scope) throw invalid();
  return { createdAt: new Date(body.t), id: body.i };
}

function isCursorBody(value: unknown): value is CursorBody {
  if (typeof value !== "object" || value === null) return false;
  const { s, t, i } = value as Record<string, unknown>;
  return (
    typeof s === "string" &&
    typeof i === "string" &&
    i.length > 0 &&
    i.length <= 255 &&
    !i.includes("\u0000") &&
    typeof t === "number" &&
    Number.isSafeInteger(t) &&
    t >= 0 &&
    t <= MAX_TIME
  );
}

/** A cursor at a place in an ordered sequence (the event feed) of one scope. */
export function encodeSequenceCursor(scope: string, sequence: number): string {
  return Buffer.from(JSON.stringify({ s: scope, q: sequence }), "utf8").toString("base64url");
}

/** Reads a cursor issued by encodeSequenceCursor for the same scope; anything else is invalid_cursor. */
export function decodeSequenceCursor(scope: string, cursor: string, parameter: string): number {
  const invalid = () =>
    new BadRequestError("invalid_cursor", `${parameter} is not a cursor issued by this listing.`, [
      { pointer: `/query/${parameter}`, message: "is not a cursor issued by this listing" },
    ]);
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalid();
  }
  const { s, q } = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
  if (s !== scope || typeof q !== "number" || !Number.isSafeInteger(q) || q < 0) throw invalid();
  return q;
}

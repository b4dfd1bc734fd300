import { Readable } from "node:stream";
import type { FastifyRequest } from "fastify";
import { BadRequestError } from "../../domain/errors.ts";
import { pointerToken } from "../../domain/validation-words.ts";

// An unpaired UTF-16 surrogate: valid in a JSON string escape, not representable in UTF-8.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Refuses text PostgreSQL cannot store (NUL, and unpaired surrogates, which a UTF-8 round trip
 * would silently replace) anywhere in the body or the query, before validation: the request gets
 * 400 invalid_request pointing at the string, never a 500 from the database.
 */
export function rejectMalformedText(request: FastifyRequest): void {
  let bad: string | undefined;
  try {
    // Only what the operation reads: a probe ignores its query, a bodiless operation its body.
    const schema = request.routeOptions.schema;
    // A streamed body (an import's file) is checked by the operation as it reads it.
    const parsedBody = schema?.body && !(request.body instanceof Readable);
    bad =
      (parsedBody ? findMalformed(request.body, "/body") : undefined) ??
      (schema?.querystring ? findMalformed(request.query, "/query") : undefined);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new BadRequestError("invalid_request", "The body is nested too deeply.", [
      { pointer: "/body", message: "is nested too deeply" },
    ]);
  }
  if (bad) {
    const message = "must not hold NUL characters or unpaired UTF-16 surrogates";
    throw new BadRequestError("invalid_request", `${bad} ${message}`, [{ pointer: bad, message }]);
  }
}

/**
 * The pointer of the first string (or key) PostgreSQL cannot store, below `pointer`. The path is
 * kept as segments and spelled out only when one is found: building a pointer for every member
 * of a large body (10,000 activities) cost more than the check itself.
 */
function findMalformed(value: unknown, pointer: string): string | undefined {
  const path: (string | number)[] = [];
  if (!hasMalformed(value, path)) return undefined;
  return pointer + path.map((segment) => `/${pointerToken(String(segment))}`).join("");
}

/** Whether `value` holds malformed text; when it does, `path` leads to it. */
function hasMalformed(value: unknown, path: (string | number)[]): boolean {
  if (typeof value === "string") return isMalformed(value);
  if (typeof value !== "object" || value === null) return false;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      path.push(index);
      if (hasMalformed(value[index], path)) return true;
      path.pop();
    }
    return false;
  }
  for (const key of Object.keys(value)) {
    path.push(key);
    if (isMalformed(key) || hasMalformed((value as Record<string, unknown>)[key], path)) return true;
    path.pop();
  }
  return false;
}

/** Any NUL or surrogate at all (one scan): most text has neither, and then needs no closer look. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what it looks for.
const SUSPECT = /[\u0000\uD800-\uDFFF]/;
const isMalformed = (text: string) => SUSPECT.test(text) && (text.includes("\u0000") || LONE_SURROGATE.test(text));

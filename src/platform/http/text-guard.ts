import { Readable } from "node:stream";
import type { FastifyRequest } from "fastify";
import { BadRequestError } from "../../domain/errors.ts";

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

function findMalformed(value: unknown, pointer: string): string | undefined {
  if (typeof value === "string") return isMalformed(value) ? pointer : undefined;
  if (typeof value !== "object" || value === null) return undefined;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = findMalformed(item, `${pointer}/${index}`);
      if (found) return found;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    const at = `${pointer}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`;
    if (isMalformed(key)) return at;
    const found = findMalformed(item, at);
    if (found) return found;
  }
  return undefined;
}

const isMalformed = (text: string) => text.includes("\u0000") || LONE_SURROGATE.test(text);

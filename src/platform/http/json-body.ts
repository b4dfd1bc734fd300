import { isUtf8 } from "node:buffer";
import type { FastifyInstance } from "fastify";
import { BadRequestError } from "../../domain/errors.ts";

/**
 * JSON bodies must be UTF-8 (RFC 8259). Fastify's own parser decodes leniently, replacing
 * invalid bytes with U+FFFD, so two different byte strings (ids `x\xC0\xAF` and `x\xC1\xBF`)
 * would become the same member. Bytes that are not UTF-8 are refused instead; valid bodies go to
 * Fastify's parser as before (prototype-poisoning keys refused, empty bodies reported).
 */
export function strictJsonBodies(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body, done) => {
    const bytes = body as Buffer;
    if (!isUtf8(bytes)) {
      done(new BadRequestError("malformed_json", "The body is not valid UTF-8."), undefined);
      return;
    }
    parse(request, bytes.toString("utf8"), done);
  });
}

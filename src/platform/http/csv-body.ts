import type { FastifyInstance, FastifyRequest } from "fastify";
import { unsupportedMediaType } from "../../domain/errors.ts";

const CSV_ONLY = "Send the file as text/csv, in UTF-8 (charset=utf-8, or no charset).";

const operationOf = (request: FastifyRequest) =>
  (request.routeOptions.schema as { operationId?: string } | undefined)?.operationId;

/**
 * text/csv bodies, for the operations whose contract body is text/csv (an import's file): the
 * request's stream is handed to the operation unread, so that a file of any size is stored as it
 * arrives and never held whole (the operation enforces its own size limit). Any other operation
 * refuses text/csv with 415, as it refuses every media type but JSON.
 */
export function csvBodies(app: FastifyInstance, operations: ReadonlySet<string>): void {
  app.addContentTypeParser("text/csv", (request, payload, done) => {
    const operationId = operationOf(request);
    if (operationId === undefined || !operations.has(operationId)) {
      done(unsupportedMediaType(), undefined);
      return;
    }
    done(null, payload);
  });
}

/**
 * For those operations, before anything is read: a body must be text/csv, in UTF-8. Any other
 * charset is refused (415) rather than guessed at; the file's bytes are checked as it arrives.
 */
export async function requireCsvBody(request: FastifyRequest): Promise<void> {
  const headers = request.headers;
  const hasBody = headers["transfer-encoding"] !== undefined || Number(headers["content-length"] ?? 0) > 0;
  if (!hasBody) return;
  const [essence = "", ...parameters] = (headers["content-type"] ?? "").split(";");
  if (essence.trim().toLowerCase() !== "text/csv") throw unsupportedMediaType(CSV_ONLY);
  for (const parameter of parameters) {
    const [name = "", value = ""] = parameter.split("=");
    const charset = value
      .trim()
      .replace(/^"(.*)"$/, "$1")
      .toLowerCase();
    if (name.trim().toLowerCase() === "charset" && charset !== "utf-8" && charset !== "utf8") {
      throw unsupportedMediaType(`${CSV_ONLY} This one is ${charset || "an empty charset"}.`);
    }
  }
}

import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import { unsupportedMediaType } from "../../domain/errors.ts";
import { csvBodies } from "./csv-body.ts";
import { strictJsonBodies } from "./json-body.ts";

/**
 * The bodies the API reads: strict JSON, and CSV streamed unread to the operations in
 * `fileOperations`. Anything else is 415.
 */
export const bodyParsers = fp(
  async (app: FastifyInstance, { fileOperations }: { fileOperations: Set<string> }) => {
    // JSON only: a text/plain body gets 415, not a confusing validation error.
    app.removeContentTypeParser("text/plain");
    strictJsonBodies(app);
    csvBodies(app, fileOperations);
    // The contract names application/problem+json for responses only; fastify-openapi-glue checks
    // every media type it names for a body parser. Problem documents are not accepted as requests.
    app.addContentTypeParser("application/problem+json", (_request, _payload, done) =>
      done(unsupportedMediaType(), undefined),
    );
  },
  { name: "body-parsers" },
);

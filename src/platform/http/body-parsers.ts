import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import { mediaTypesNamed } from "../../contract/contract.ts";
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
    // fastify-openapi-glue warns at every start about each media type the contract names, for a
    // request or only for an answer, that has no body parser: the answers' application/problem+json
    // and application/x-ndjson. They are not accepted as request bodies: a parser that refuses
    // them, with the same 415 as any other media type, keeps the start quiet.
    for (const type of mediaTypesNamed()) {
      if (app.hasContentTypeParser(type)) continue;
      app.addContentTypeParser(type, (_request, _payload, done) => done(unsupportedMediaType(), undefined));
    }
  },
  { name: "body-parsers" },
);

import type { Readable } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { operations, paths } from "../../generated/api.d.ts";

/**
 * Handler signatures derived from the contract (generated/api.d.ts): the request's params, query
 * and body, and the success body (or, for a file, a stream), of each operationId. The handler
 * object is declared with `satisfies Handlers`, so a missing, misspelt or mistyped operation fails
 * the type check.
 */
type PathOf<Op> = Op extends { parameters: { path: infer P } } ? P : Record<string, never>;
type QueryOf<Op> = Op extends { parameters: { query?: infer Q } } ? NonNullable<Q> : Record<string, never>;
/** A JSON body arrives parsed; a CSV body as the request's stream, read by the operation (see csv-body.ts). */
type BodyOf<Op> = Op extends { requestBody?: { content: { "application/json": infer B } } }
  ? B
  : Op extends { requestBody?: { content: { "text/csv": unknown } } }
    ? Readable
    : undefined;
type JsonOf<R> = R extends { content: { "application/json": infer C } } ? C : never;
type SuccessOf<Op> = Op extends { responses: infer R }
  ? 200 extends keyof R
    ? JsonOf<R[200]>
    : 201 extends keyof R
      ? JsonOf<R[201]>
      : 202 extends keyof R
        ? JsonOf<R[202]>
        : undefined
  : never;

/** An operation whose 200 answer may also be a file (a media type besides JSON) answers it as a stream. */
type FileTypesOf<R> = R extends { content: infer C } ? Exclude<keyof C, "application/json"> : never;
type FileOf<Op> = Op extends { responses: { 200: infer R } }
  ? [FileTypesOf<R>] extends [never]
    ? never
    : Readable
  : never;

export type RequestOf<Op> = FastifyRequest<{
  Params: PathOf<Op>;
  Querystring: QueryOf<Op>;
  Body: BodyOf<Op>;
}>;

export type Handler<Op> = (request: RequestOf<Op>, reply: FastifyReply) => Promise<SuccessOf<Op> | FileOf<Op>>;

type Method = "get" | "put" | "post" | "delete" | "patch";
/** The operations the server answers: those of `paths` (the contract's `webhooks` are sent, not served). */
type Served = { [P in keyof paths]: paths[P][Method & keyof paths[P]] }[keyof paths];
type ServedOperationId = { [Id in keyof operations]: operations[Id] extends Served ? Id : never }[keyof operations];

export type Handlers = { [OperationId in ServedOperationId]: Handler<operations[OperationId]> };

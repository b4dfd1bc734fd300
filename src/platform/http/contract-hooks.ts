import type { FastifyInstance, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { bodyLimits, operationsRequiringBody, operationsTakingIdempotencyKey } from "../../contract/contract.ts";
import { BadRequestError } from "../../domain/errors.ts";
import { requireCsvBody } from "./csv-body.ts";
import type { idempotencyHooks } from "./idempotency.ts";
import { problemErrorHandler, routeNotFound } from "./problem.ts";
import { rejectMalformedText } from "./text-guard.ts";
import { createValidatorCompiler } from "./validation.ts";

async function rejectMalformedTextHook(request: FastifyRequest): Promise<void> {
  rejectMalformedText(request);
}

async function requireBody(request: { body?: unknown }): Promise<void> {
  if (request.body === undefined) {
    throw new BadRequestError("invalid_request", "/body is required", [{ pointer: "/body", message: "is required" }]);
  }
}

export interface ContractHookOptions {
  /** Operations whose body is a file (text/csv), streamed to them unread. */
  fileOperations: Set<string>;
  idempotency: ReturnType<typeof idempotencyHooks>;
}

/**
 * How every contract operation's route is run: validation against the contract, one error
 * handler for problem documents, authentication before the body is read, and the hooks only some
 * operations need, attached to those routes alone.
 */
export const contractHooks = fp(
  async (app: FastifyInstance, { fileOperations, idempotency }: ContractHookOptions) => {
    app.setValidatorCompiler(createValidatorCompiler());
    app.setErrorHandler(problemErrorHandler);
    app.setNotFoundHandler(routeNotFound);
    // fastify-openapi-glue runs security handlers as preHandler, after the body is parsed and
    // validated. Authenticate first instead: an unauthenticated caller gets 401 whatever it sends,
    // and its body is never parsed.
    //
    // Fastify skips body validation when there is no body at all; the contract's
    // `requestBody.required` is enforced here, before the handler can see an undefined body.
    //
    // Hooks only some operations need are attached to those routes, so that the others (the hot
    // reads above all) do not pay for them: the text guard where there is a body or a query, the
    // Idempotency-Key handling on POST (not on a file upload, whose body is not read before it
    // runs; the contract offers no Idempotency-Key there) and on any other operation whose
    // contract offers it (declareField's PUT), the media type of a file upload.
    const bodyRequired = operationsRequiringBody();
    const takesKey = operationsTakingIdempotencyKey();
    const largeBodies = bodyLimits();
    app.addHook("onRoute", (route) => {
      const schema = route.schema as { operationId?: string; body?: unknown; querystring?: unknown } | undefined;
      // An operation whose batches may be larger than BODY_LIMIT (x-body-limit), never smaller.
      const largeBody = schema?.operationId === undefined ? undefined : largeBodies.get(schema.operationId);
      if (largeBody !== undefined) route.bodyLimit = Math.max(largeBody, app.initialConfig.bodyLimit ?? 0);
      const takesFile = schema?.operationId !== undefined && fileOperations.has(schema.operationId);
      if (route.preHandler) {
        const authenticate = route.preHandler as NonNullable<typeof route.onRequest>;
        route.onRequest = takesFile ? [authenticate, requireCsvBody].flat() : authenticate;
        route.preHandler = undefined;
      }
      const preValidation = [];
      if (schema?.body || schema?.querystring) preValidation.push(rejectMalformedTextHook);
      if (schema?.operationId && bodyRequired.has(schema.operationId)) preValidation.push(requireBody);
      if (preValidation.length > 0) route.preValidation = preValidation;
      const offersKey = schema?.operationId !== undefined && takesKey.has(schema.operationId);
      if ((route.method === "POST" && !takesFile) || offersKey) {
        route.preHandler = idempotency.preHandler;
        route.onSend = idempotency.onSend;
      }
    });
  },
  { name: "contract-hooks" },
);

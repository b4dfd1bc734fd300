import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import type { SecurityError } from "fastify-openapi-glue";
import * as openapiGlue from "fastify-openapi-glue";
import {
  AppError,
  BadRequestError,
  NotFoundError,
  payloadTooLarge,
  ServiceUnavailableError,
  serviceUnavailable,
  TooManyExportsError,
  TooManyHeavyRequestsError,
  unsupportedMediaType,
} from "../../domain/errors.ts";
import { randomBase62 } from "../../domain/ids.ts";
import { type AjvError, plainMessage, plainName, pointerToken } from "../../domain/validation-words.ts";
import { databaseFault, sqlState } from "../db/pg-errors.ts";

export const PROBLEM_TYPE_PREFIX = "urn:problem-type:audience-service:";

// fastify-openapi-glue exports the class at run time, though its types declare an interface only.
const SecurityErrorClass = (openapiGlue as unknown as { SecurityError: abstract new () => SecurityError })
  .SecurityError;
const isSecurityError = (error: unknown): error is SecurityError => error instanceof SecurityErrorClass;

/** The id of a request: in its log lines, its X-Request-Id header and its problem documents. */
export const newRequestId = () => `req_${randomBase62(16)}`;

/** Writes an RFC 9457 problem document for the error. */
export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
  // Also set here: errors the router raises come before the onRequest hook that sets it.
  reply.header("x-request-id", request.id);
  if (
    error instanceof ServiceUnavailableError ||
    error instanceof TooManyExportsError ||
    error instanceof TooManyHeavyRequestsError
  ) {
    reply.header("retry-after", String(error.retryAfterSeconds));
  }
  return reply
    .code(error.status)
    .type("application/problem+json")
    .send({
      type: PROBLEM_TYPE_PREFIX + error.code,
      title: error.title,
      status: error.status,
      detail: error.detail,
      code: error.code,
      requestId: String(request.id),
      ...(error.errors ? { errors: error.errors } : {}),
      ...error.extensions,
    });
}

/**
 * The one error handler: every failure leaves as a problem document; 5xx details only go to the
 * log, once, here (with the SQLSTATE of a database failure; the request id is in every line).
 */
export function problemErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const cause = securityFault(error) ?? error;
  const problem = toAppError(cause);
  if (problem.status >= 500) {
    const state = sqlState(cause);
    const details = { err: cause, ...(state ? { sqlState: state } : {}) };
    if (problem instanceof ServiceUnavailableError) request.log.warn(details, `request failed: ${problem.detail}`);
    else request.log.error(details, "request failed");
  }
  return sendProblem(request, reply, problem);
}

/**
 * fastify-openapi-glue wraps what the security handlers threw in a SecurityError with `errors`.
 * A failure there that is not a credential error (the database did not answer while a key was
 * being checked) is the request's real failure: it must not become a 401.
 */
function securityFault(error: FastifyError): unknown {
  if (!isSecurityError(error)) return undefined;
  return error.errors.find((e) => !(e instanceof AppError));
}

export function routeNotFound(request: FastifyRequest, reply: FastifyReply) {
  return sendProblem(
    request,
    reply,
    new NotFoundError("route_not_found", `No operation ${request.method} ${request.url.split("?")[0]}.`),
  );
}

function toAppError(cause: unknown): AppError {
  if (cause instanceof AppError) return cause;
  const fault = databaseFault(cause);
  if (fault === "busy") return serviceUnavailable("The database is saturated; retry in a second.", 1);
  if (fault === "unavailable") {
    return serviceUnavailable("The database is not reachable or did not answer in time; retry in a few seconds.", 2);
  }
  if (!(cause instanceof Error)) return internalError();
  if (isSecurityError(cause)) {
    const found = cause.errors.find((e) => e instanceof AppError);
    return found instanceof AppError ? found : new AppError(401, "unauthorized", "Unauthorized", "Unauthorized.");
  }
  const error = cause as FastifyError;
  if (error.validation) return validationProblem(error);
  switch (error.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return payloadTooLarge();
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return unsupportedMediaType();
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new BadRequestError("malformed_json", "The body is empty but its content type is application/json.");
    // Fastify's JSON parser also refuses keys that could pollute prototypes with this error.
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return new BadRequestError(
        "malformed_json",
        "The body is not valid JSON, or holds a forbidden key (__proto__, constructor.prototype).",
      );
  }
  const status = error.statusCode ?? 500;
  if (status === 413) return payloadTooLarge();
  if (status === 415) return unsupportedMediaType();
  if (status >= 400 && status < 500) return new BadRequestError("invalid_request", error.message);
  return internalError();
}

const internalError = () =>
  new AppError(500, "internal_error", "Internal error", "The server failed to handle the request.");

/**
 * Fastify's validation errors (ajv) as problem errors with JSON pointers into the request, each
 * said in words (validation-words.ts); the detail names the first one.
 */
function validationProblem(error: FastifyError): BadRequestError {
  const part = error.validationContext === "querystring" ? "query" : (error.validationContext ?? "body");
  const ajvErrors = (error.validation ?? []) as AjvError[];
  // A refused property name arrives twice: its own error (with the name) and "property name must be valid".
  const errors = explainAnyOf(ajvErrors.filter((e) => e.keyword !== "propertyNames")).map((item) => {
    let pointer = `/${part}${item.instancePath}`;
    if (item.keyword === "required") pointer += `/${pointerToken(String(item.params.missingProperty))}`;
    if (item.keyword === "additionalProperties") pointer += `/${pointerToken(String(item.params.additionalProperty))}`;
    if (item.propertyName !== undefined) pointer += `/${pointerToken(item.propertyName)}`;
    // ajv's own phrasing (item.message) is never sent.
    return { pointer, message: item.words ?? plainMessage(item) };
  });
  const first = errors[0] ?? { pointer: `/${part}`, message: "is not valid" };
  return new BadRequestError("invalid_request", `${plainName(first.pointer)} ${first.message}.`, errors);
}

/**
 * An anyOf failure arrives as every branch's errors plus "must match a schema in anyOf". Say what
 * the client can act on: a branch's real error (a bad e-mail, say) if there is one, else which
 * properties would satisfy a branch.
 */
function explainAnyOf(errors: AjvError[]): (AjvError & { words?: string })[] {
  const anyOf = errors.find((e) => e.keyword === "anyOf");
  if (!anyOf) return errors;
  const branches = errors.filter((e) => e !== anyOf && e.schemaPath.startsWith(`${anyOf.schemaPath}/`));
  const specific = branches.filter((e) => e.keyword !== "required");
  if (specific.length > 0) return specific;
  const names = branches.map((e) => String(e.params.missingProperty));
  return [{ ...anyOf, words: `must have one of the properties ${names.join(", ")}` }];
}

import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { AppError, BadRequestError, NotFoundError, payloadTooLarge, unsupportedMediaType } from "../domain/errors.ts";

export const PROBLEM_TYPE_PREFIX = "urn:problem-type:audience-service:";

/** Writes an RFC 9457 problem document for the error. */
export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
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
    });
}

/** The one error handler: every failure leaves as a problem document; 5xx details only go to the log. */
export function problemErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const problem = toAppError(error);
  if (problem.status >= 500) request.log.error({ err: error }, "request failed");
  return sendProblem(request, reply, problem);
}

export function routeNotFound(request: FastifyRequest, reply: FastifyReply) {
  return sendProblem(
    request,
    reply,
    new NotFoundError("route_not_found", `No operation ${request.method} ${request.url.split("?")[0]}.`),
  );
}

function toAppError(error: FastifyError): AppError {
  if (error instanceof AppError) return error;
  // fastify-openapi-glue wraps what the security handlers threw in a SecurityError with `errors`.
  const securityErrors = (error as { errors?: unknown }).errors;
  if (Array.isArray(securityErrors)) {
    const cause = securityErrors.find((e) => e instanceof AppError);
    return cause instanceof AppError ? cause : new AppError(401, "unauthorized", "Unauthorized", "Unauthorized.");
  }
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
  return new AppError(500, "internal_error", "Internal error", "The server failed to handle the request.");
}

interface AjvError {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  message?: string;
  params: Record<string, unknown>;
}

/** Fastify's validation errors (ajv) as problem errors with JSON pointers into the request. */
function validationProblem(error: FastifyError): BadRequestError {
  const part = error.validationContext === "querystring" ? "query" : (error.validationContext ?? "body");
  const ajvErrors = (error.validation ?? []) as AjvError[];
  const errors = explainAnyOf(ajvErrors).map((item) => {
    let pointer = `/${part}${item.instancePath}`;
    let message = item.message ?? "is invalid";
    if (item.keyword === "required") pointer += `/${String(item.params.missingProperty)}`;
    if (item.keyword === "additionalProperties") {
      pointer += `/${String(item.params.additionalProperty)}`;
      message = "is not a known property";
    }
    return { pointer, message };
  });
  const first = errors[0] ?? { pointer: `/${part}`, message: "is invalid" };
  return new BadRequestError("invalid_request", `${first.pointer} ${first.message}`, errors);
}

/**
 * An anyOf failure arrives as every branch's errors plus "must match a schema in anyOf". Say what
 * the client can act on: a branch's real error (a bad e-mail, say) if there is one, else which
 * properties would satisfy a branch.
 */
function explainAnyOf(errors: AjvError[]): AjvError[] {
  const anyOf = errors.find((e) => e.keyword === "anyOf");
  if (!anyOf) return errors;
  const branches = errors.filter((e) => e !== anyOf && e.schemaPath.startsWith(`${anyOf.schemaPath}/`));
  const specific = branches.filter((e) => e.keyword !== "required");
  if (specific.length > 0) return specific;
  const names = branches.map((e) => String(e.params.missingProperty));
  return [{ ...anyOf, message: `must have one of the properties ${names.join(", ")}` }];
}

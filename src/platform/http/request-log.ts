import { type FastifyReply, type FastifyRequest, LogController } from "fastify";

/**
 * One log line per answered request, at info: method, route (the template, not the path: a path
 * holds member ids, and a client's junk), contract operation, status and duration; the request id
 * comes with the request's logger (reqId). Fastify's own two lines per request ("incoming
 * request", "request completed") doubled the output and carried the raw URL; its other lines per
 * request (a route not found, its default error handler's) are off too. Bodies are never logged;
 * a failure's detail is logged once by the error handler (problem.ts), at warn or error.
 */
export class RequestLog extends LogController {
  constructor() {
    super({ disableRequestLogging: true });
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const schema = request.routeOptions.schema as { operationId?: string } | undefined;
    const line = {
      method: request.method,
      route: request.routeOptions.url ?? null,
      operation: schema?.operationId ?? null,
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 10) / 10,
    };
    // An error here is one of writing the answer (a stream that failed after its headers).
    if (error) request.log.error({ ...line, err: error }, "request");
    else request.log.info(line, "request");
  }
}

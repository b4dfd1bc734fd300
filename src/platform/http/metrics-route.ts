import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { UnauthorizedError } from "../../domain/errors.ts";
import { httpDuration, httpRequests, registry } from "../metrics.ts";
import { sendProblem } from "./problem.ts";
import { sendsToken } from "./security.ts";

/** The label of a request: its contract operation, else its route, else "unmatched" (a 404). */
function operationOf(request: FastifyRequest): string {
  const schema = request.routeOptions.schema as { operationId?: string } | undefined;
  return schema?.operationId ?? request.routeOptions.url ?? "unmatched";
}

/** Counts every answered request, and how long it took, by operation and status. */
export function countRequests(app: FastifyInstance): void {
  app.addHook("onResponse", (request, reply, done) => {
    const operation = operationOf(request);
    httpRequests.inc({ operation, method: request.method, status: String(reply.statusCode) });
    httpDuration.observe({ operation }, reply.elapsedTime / 1000);
    done();
  });
}

/**
 * GET /metrics in Prometheus's text format (not an operation of the contract, like /docs). With
 * a token configured (METRICS_TOKEN) a scrape must send it as a bearer token.
 */
export function metricsRoute(app: FastifyInstance, { token }: { token?: string | undefined }): void {
  const expected = token === undefined ? undefined : Buffer.from(token);
  app.get("/metrics", async (request: FastifyRequest, reply: FastifyReply) => {
    if (expected && !sendsToken(request, expected)) {
      return sendProblem(
        request,
        reply,
        new UnauthorizedError("Send the metrics token as: Authorization: Bearer <token>"),
      );
    }
    reply.type(registry.contentType);
    return registry.metrics();
  });
}

import type { FastifyInstance } from "fastify";
import { AppError } from "../../domain/errors.ts";
import { sendProblem } from "./problem.ts";

export const requestTimeoutError = (requestTimeoutMs: number) =>
  new AppError(
    408,
    "request_timeout",
    "Request timeout",
    `The request did not arrive within ${Math.round(requestTimeoutMs / 1000)} seconds.`,
  );

/**
 * Node's request timeout cuts off a request whose headers trickle in, but not one whose body does
 * once the request has been dispatched: such a request would hold its connection and its buffers
 * for as long as the client likes. A body still incomplete requestTimeoutMs after the headers
 * gets 408 request_timeout here, and the connection is closed.
 *
 * A file upload (the operations in `fileOperations`) may take far longer than that: it is stored
 * as it arrives, never held whole. It gets 408 only when nothing arrives for requestTimeoutMs.
 */
export function bodyDeadline(
  app: FastifyInstance,
  requestTimeoutMs: number,
  fileOperations: ReadonlySet<string> = new Set(),
): void {
  app.addHook("onRequest", (request, reply, done) => {
    const raw = request.raw;
    // Only a request with a body can trickle after dispatch; reads pay nothing for this.
    const hasBody = raw.headers["transfer-encoding"] !== undefined || Number(raw.headers["content-length"] ?? 0) > 0;
    if (!hasBody || raw.complete) {
      done();
      return;
    }
    const timedOut = () => {
      if (raw.complete || reply.sent) return;
      reply.header("connection", "close");
      reply.raw.once("finish", () => raw.socket?.destroy());
      sendProblem(request, reply, requestTimeoutError(requestTimeoutMs));
    };
    const operationId = (request.routeOptions.schema as { operationId?: string } | undefined)?.operationId;
    if (operationId !== undefined && fileOperations.has(operationId)) {
      // The socket's own idle timer: it restarts with every byte that arrives.
      raw.setTimeout(requestTimeoutMs, timedOut);
      raw.once("end", () => raw.setTimeout(0));
      done();
      return;
    }
    const timer = setTimeout(timedOut, requestTimeoutMs);
    timer.unref();
    const clear = () => clearTimeout(timer);
    raw.once("end", clear);
    raw.once("close", clear);
    reply.raw.once("finish", clear);
    done();
  });
}

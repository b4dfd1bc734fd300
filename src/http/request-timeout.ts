import type { FastifyInstance } from "fastify";
import { AppError } from "../domain/errors.ts";
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
 */
export function bodyDeadline(app: FastifyInstance, requestTimeoutMs: number): void {
  app.addHook("onRequest", (request, reply, done) => {
    const raw = request.raw;
    // Only a request with a body can trickle after dispatch; reads pay nothing for this.
    const hasBody = raw.headers["transfer-encoding"] !== undefined || Number(raw.headers["content-length"] ?? 0) > 0;
    if (!hasBody || raw.complete) {
      done();
      return;
    }
    const timer = setTimeout(() => {
      if (raw.complete || reply.sent) return;
      reply.header("connection", "close");
      reply.raw.once("finish", () => raw.socket?.destroy());
      sendProblem(request, reply, requestTimeoutError(requestTimeoutMs));
    }, requestTimeoutMs);
    timer.unref();
    const clear = () => clearTimeout(timer);
    raw.once("end", clear);
    raw.once("close", clear);
    reply.raw.once("finish", clear);
    done();
  });
}

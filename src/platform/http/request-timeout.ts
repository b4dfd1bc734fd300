import type { Socket } from "node:net";
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

/** A refused request's unread body is read and dropped, keeping the connection, up to this size. */
export const DRAIN_LIMIT_BYTES = 1_048_576;

/**
 * A request refused before its body was read to the end (a file that fails its check after the
 * first chunk, one over IMPORT_MAX_BYTES, a 401 or 415 with a body) must not leave its connection
 * stuck: the rest of the body sits unread in front of the client's next request, which would
 * then wait for the request timeout. So, as the answer goes out, the rest is read and dropped:
 * on the same connection when the declared length is at most drainLimit bytes; otherwise (a
 * larger or a chunked body) the answer says Connection: close, and the connection lingers.
 */
export function unreadBodies(
  app: FastifyInstance,
  { drainLimit = DRAIN_LIMIT_BYTES, lingerMs }: { drainLimit?: number; lingerMs: number },
): void {
  app.addHook("onSend", (request, reply, payload, done) => {
    const raw = request.raw;
    const hasBody = raw.headers["transfer-encoding"] !== undefined || Number(raw.headers["content-length"] ?? 0) > 0;
    if (!hasBody || raw.readableEnded) {
      done(null, payload);
      return;
    }
    // NaN for a chunked body: its length is unknown, so it is not drained on a kept connection.
    if (!raw.complete && !(Number(raw.headers["content-length"]) <= drainLimit)) {
      reply.header("connection", "close");
      if (raw.socket) lingerBeforeClosing(raw.socket, lingerMs);
    }
    // Also when the whole body has arrived but was not all read: what is buffered is let go.
    raw.resume();
    done(null, payload);
  });
}

/**
 * Node closes a connection it answered with Connection: close as soon as the answer is written.
 * Body bytes the client is still sending then make the kernel reset the connection, and a reset
 * can discard the answer before the client has read it (RFC 9112, section 9.6). Instead, the
 * server half-closes and goes on reading (and dropping) until the client closes its side, for
 * at most lingerMs.
 */
function lingerBeforeClosing(socket: Socket, lingerMs: number): void {
  socket.destroySoon = () => {
    socket.end();
    socket.resume();
    const timer = setTimeout(() => socket.destroy(), lingerMs);
    timer.unref();
    socket.once("close", () => clearTimeout(timer));
  };
}

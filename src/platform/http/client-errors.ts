import type { Socket } from "node:net";
import { newRequestId, PROBLEM_TYPE_PREFIX } from "./problem.ts";
import { requestTimeoutError } from "./request-timeout.ts";

type Answer = [status: number, reason: string, code: string, detail: string];

function answerFor(code: string | undefined, requestTimeoutMs: number): Answer {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return [
        431,
        "Request Header Fields Too Large",
        "headers_too_large",
        "The URL and headers together exceed 16 KiB.",
      ];
    // Node's request timeout: the headers did not all arrive in time (a trickled request).
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return [408, "Request Timeout", "request_timeout", requestTimeoutError(requestTimeoutMs).detail];
    default:
      return [400, "Bad Request", "invalid_request", "The request is not valid HTTP."];
  }
}

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (headers over 16 KiB, malformed
 * HTTP, a request that did not arrive within the request timeout) are answered with a problem
 * document too, written straight to the socket, with a request id like every other answer.
 */
export function clientErrorHandler(requestTimeoutMs: number) {
  return (error: Error & { code?: string }, socket: Socket): void => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const [status, reason, code, detail] = answerFor(error.code, requestTimeoutMs);
    const requestId = newRequestId();
    const body = JSON.stringify({ type: PROBLEM_TYPE_PREFIX + code, title: reason, status, detail, code, requestId });
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  };
}

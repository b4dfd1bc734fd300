import type { Socket } from "node:net";
import { PROBLEM_TYPE_PREFIX } from "./problem.ts";

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (headers over 16 KiB, malformed
 * HTTP) are answered with a problem document too, written straight to the socket.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = error.code === "HPE_HEADER_OVERFLOW";
  const [status, reason, code, detail] = tooLarge
    ? [431, "Request Header Fields Too Large", "headers_too_large", "The URL and headers together exceed 16 KiB."]
    : [400, "Bad Request", "invalid_request", "The request is not valid HTTP."];
  const body = JSON.stringify({ type: PROBLEM_TYPE_PREFIX + code, title: reason, status, detail, code });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

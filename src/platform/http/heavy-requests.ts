import type { FastifyReply, FastifyRequest } from "fastify";
import type { Handlers } from "../../contract/handler-types.ts";
import { TooManyHeavyRequestsError } from "../../domain/errors.ts";

type AnyHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/**
 * Heavy operations (the contract marks them x-heavy: each evaluates a filter or sets over a whole
 * workspace) run at most `perKey` at once for one API key in this process; one more is refused at
 * once with 429 too_many_heavy_requests and Retry-After, before it reads anything. The rate limit
 * counts requests, and one of these may cost as much as thousands of others: without this, one
 * key could hold every connection (or, on the embedded store, the one thread) with a few of them.
 * The place is held by the handler itself, so it is given back when the work ends, not when the
 * client goes away: a client that sends and disconnects still holds its place meanwhile.
 */
export function withHeavyLimit(handlers: Handlers, heavy: Set<string>, perKey: number): Handlers {
  const running = new Map<string, number>();
  const wrapped: Record<string, AnyHandler> = {};
  for (const [operationId, handler] of Object.entries(handlers as unknown as Record<string, AnyHandler>)) {
    wrapped[operationId] = !heavy.has(operationId)
      ? handler
      : async (request, reply) => {
          const principal = request.principal;
          if (!principal) return handler(request, reply);
          const key = `${principal.workspaceId}\u0000${principal.keyId}`;
          const held = running.get(key) ?? 0;
          if (held >= perKey) {
            throw new TooManyHeavyRequestsError(
              `This API key already runs ${perKey} heavy request(s) (previews, dry runs, overlaps, rule changes) ` +
                "on this server, as many as one key may at once; retry in 1 second.",
              1,
            );
          }
          running.set(key, held + 1);
          try {
            return await handler(request, reply);
          } finally {
            const left = (running.get(key) ?? 1) - 1;
            if (left === 0) running.delete(key);
            else running.set(key, left);
          }
        };
  }
  return wrapped as unknown as Handlers;
}

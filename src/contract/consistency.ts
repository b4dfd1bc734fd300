import type { FastifyReply, FastifyRequest } from "fastify";
import type { Store } from "../platform/db/database.ts";
import { readingFromReplicas } from "../platform/db/read-scope.ts";
import type { Handlers } from "./handler-types.ts";

type AnyHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/**
 * Reads on replicas, with read-your-writes (DATABASE_READ_URLS). A read operation's handler runs
 * in a read scope carrying the request's Consistency-Token, so that its statements may be
 * answered by a replica that has replayed it (replica-reads.ts); any other operation is a write,
 * whose success answer carries the primary's position after it as its Consistency-Token. Only
 * for a store with replicas: without, the handlers are left as they are.
 */
export function withConsistency(
  handlers: Handlers,
  reads: Set<string>,
  store: Pick<Store, "replicated" | "consistencyToken">,
): Handlers {
  if (!store.replicated) return handlers;
  const wrapped: Record<string, AnyHandler> = {};
  for (const [operationId, handler] of Object.entries(handlers as unknown as Record<string, AnyHandler>)) {
    wrapped[operationId] = reads.has(operationId)
      ? (request, reply) => readingFromReplicas(tokenOf(request), () => handler(request, reply))
      : async (request, reply) => {
          const result = await handler(request, reply);
          // The write is committed whatever happens now: a primary that does not tell its
          // position costs the answer its token (the client keeps its last), not its success.
          const token = await store.consistencyToken().catch(() => undefined);
          if (token !== undefined && !reply.sent) reply.header("consistency-token", token);
          return result;
        };
  }
  return wrapped as unknown as Handlers;
}

function tokenOf(request: FastifyRequest): string | undefined {
  const token = request.headers["consistency-token"];
  return Array.isArray(token) ? token[0] : token;
}

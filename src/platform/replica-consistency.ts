import type { FastifyReply, FastifyRequest } from "fastify";
import type { Store } from "./db/database.ts";
import { readingFromReplicas } from "./db/read-scope.ts";

type AnyHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/**
 * Reads on replicas, with read-your-writes (DATABASE_READ_URLS). A read operation's handler runs
 * in a read scope carrying the request's Consistency-Token, so that its statements may be
 * answered by a replica that has replayed it (replica-reads.ts); a write operation's success
 * answer carries the primary's position after it as its Consistency-Token (src/contract/contract.ts
 * says which is which); the health probes are neither. Only for a store with replicas: without,
 * the handlers are left as they are. It lives beside the database layer it routes, not in
 * src/contract/, which reads the contract and imports no database.
 */
export function withConsistency<Handlers extends object>(
  handlers: Handlers,
  { reads, writes }: { reads: Set<string>; writes: Set<string> },
  store: Pick<Store, "replicated" | "consistencyToken">,
): Handlers {
  if (!store.replicated) return handlers;
  const wrapped: Record<string, AnyHandler> = {};
  for (const [operationId, handler] of Object.entries(handlers as unknown as Record<string, AnyHandler>)) {
    // Neither (the health probes): as it is, asking the primary nothing.
    wrapped[operationId] = !writes.has(operationId)
      ? reads.has(operationId)
        ? (request, reply) => readingFromReplicas(tokenOf(request), () => handler(request, reply))
        : handler
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

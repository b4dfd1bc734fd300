import { createHash } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import { AppError, ConflictError } from "../domain/errors.ts";
import type { Store } from "../store/database.ts";
import type { IdempotencyRepo, IdempotencyScope } from "../store/idempotency-repo.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** Who the security handler authenticated: an API key, or the admin token. */
    principal?: { workspaceId: string; keyId: string };
    /** The Idempotency-Key this request claimed, to be completed with its response. */
    idempotency?: IdempotencyScope;
  }
}

const WAIT_MS = 60_000;
const POLL_MS = 100;

const reusedKey = () =>
  new AppError(
    422,
    "idempotency_key_reused",
    "Idempotency key reused",
    "This Idempotency-Key was used with a different request.",
  );

/**
 * Idempotency-Key on POST requests (Stripe's semantics): claimed after authentication and
 * validation, completed with the response as it is sent, replayed for a retry with the same body.
 * The hooks are attached to the POST routes only (see app.ts), so reads pay nothing for them.
 */
export function idempotencyHooks(
  store: Pick<Store, "db">,
  idempotencyRepo: Pick<IdempotencyRepo, "claim" | "release" | "complete">,
) {
  async function preHandler(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const key = request.headers["idempotency-key"];
    if (typeof key !== "string" || !request.principal) return;
    const scope = { ...request.principal, key };
    const hash = requestHash(request);
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const claim = await idempotencyRepo.claim(store.db, scope, hash);
      if (claim.state === "claimed") {
        request.idempotency = scope;
        return;
      }
      if (claim.state === "mismatch") throw reusedKey();
      if (claim.state === "replay") {
        reply.code(claim.statusCode).header("idempotent-replayed", "true");
        if (claim.contentType) reply.header("content-type", claim.contentType);
        return reply.send(claim.body ?? undefined);
      }
      if (Date.now() >= deadline) {
        throw new ConflictError("idempotency_key_in_progress", "A request with this Idempotency-Key is still running.");
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  async function onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    const scope = request.idempotency;
    if (!scope) return payload;
    request.idempotency = undefined;
    if (reply.statusCode >= 500) {
      await idempotencyRepo.release(store.db, scope);
    } else {
      const contentType = reply.getHeader("content-type");
      await idempotencyRepo.complete(store.db, scope, {
        statusCode: reply.statusCode,
        contentType: typeof contentType === "string" ? contentType : null,
        body: typeof payload === "string" ? payload : null,
      });
    }
    return payload;
  }

  return { preHandler, onSend };
}

function requestHash(request: FastifyRequest): string {
  return createHash("sha256")
    .update(`${request.method} ${request.url}\n${JSON.stringify(request.body ?? null)}`)
    .digest("hex");
}

import { createHash } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import { AppError, ConflictError } from "../../domain/errors.ts";
import type { Store } from "../db/database.ts";
import type { IdempotencyRepo, IdempotencyScope } from "./idempotency-repo.ts";

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

/** How soon, and at most how often, a release or completion the database missed is tried again. */
const SETTLE_RETRY_MS = 250;
const SETTLE_RETRY_MAX_MS = 2_000;

/**
 * Idempotency-Key on POST requests (Stripe's semantics): claimed after authentication and
 * validation, completed with the response as it is sent, replayed for a retry with the same body.
 * The hooks are attached to the POST routes only (see app.ts), so reads pay nothing for them.
 *
 * A claim is settled (released after a 5xx or a 429, completed otherwise) as the answer is sent:
 * a request refused for want of capacity (too_many_heavy_requests, after the claim) did nothing,
 * and its retry with the same key must run, not replay the refusal. When the
 * database is away at that moment, the answer still goes out, and the settling is kept and tried
 * again until the database takes it (and first thing when the same key comes back to this
 * process): a request that failed because the database went away never leaves its key "in
 * progress", and an acknowledged one is replayed, not executed twice.
 */
export function idempotencyHooks(
  store: Pick<Store, "db">,
  idempotencyRepo: Pick<IdempotencyRepo, "claim" | "release" | "complete">,
) {
  const unsettled = new Map<string, () => Promise<void>>();
  let timer: NodeJS.Timeout | undefined;
  let retryMs = SETTLE_RETRY_MS;
  const keyOf = (scope: IdempotencyScope) => `${scope.workspaceId}\u0000${scope.keyId}\u0000${scope.key}`;

  /** Settles the claim now if the database takes it; else keeps it for later. */
  async function settle(scope: IdempotencyScope, write: () => Promise<void>): Promise<void> {
    const key = keyOf(scope);
    try {
      await write();
      if (unsettled.get(key) === write) unsettled.delete(key);
    } catch {
      unsettled.set(key, write);
      scheduleRetry();
    }
  }

  function scheduleRetry(): void {
    if (timer) return;
    timer = setTimeout(async () => {
      timer = undefined;
      for (const [key, write] of [...unsettled]) {
        try {
          await write();
          if (unsettled.get(key) === write) unsettled.delete(key);
        } catch {
          break; // the database is still away: keep the rest for the next round
        }
      }
      retryMs = unsettled.size === 0 ? SETTLE_RETRY_MS : Math.min(retryMs * 2, SETTLE_RETRY_MAX_MS);
      if (unsettled.size > 0) scheduleRetry();
    }, retryMs);
    timer.unref();
  }

  async function preHandler(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const key = request.headers["idempotency-key"];
    if (typeof key !== "string" || !request.principal) return;
    const scope = { ...request.principal, key };
    // This key's earlier request is not settled yet: settle it first (or fail as it did).
    const pending = unsettled.get(keyOf(scope));
    if (pending) {
      await pending();
      unsettled.delete(keyOf(scope));
    }
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
    if (reply.statusCode >= 500 || reply.statusCode === 429) {
      await settle(scope, () => idempotencyRepo.release(store.db, scope));
    } else {
      const contentType = reply.getHeader("content-type");
      const response = {
        statusCode: reply.statusCode,
        contentType: typeof contentType === "string" ? contentType : null,
        body: typeof payload === "string" ? payload : null,
      };
      await settle(scope, () => idempotencyRepo.complete(store.db, scope, response));
    }
    return payload;
  }

  return {
    preHandler,
    onSend,
    /** Stops retrying; what is still unsettled is released by the 5-minute rule. */
    close(): void {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

function requestHash(request: FastifyRequest): string {
  return createHash("sha256")
    .update(`${request.method} ${request.url}\n${JSON.stringify(request.body ?? null)}`)
    .digest("hex");
}

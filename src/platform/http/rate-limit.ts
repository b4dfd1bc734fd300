import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance } from "fastify";
import { AppError } from "../../domain/errors.ts";
import type { Store } from "../db/database.ts";
import type { RateLimitRepo } from "./rate-limit-repo.ts";
import { sharedRateLimitStore } from "./shared-rate-limit-store.ts";

export interface RateLimitOptions {
  /** Requests per API key per window; 0 turns rate limiting off. */
  max: number;
  windowMs: number;
}

/**
 * Rate limiting per API key (@fastify/rate-limit), after authentication so the key is known.
 * Answers carry RateLimit-Limit/Remaining/Reset; an exceeded limit is 429 rate_limited with
 * Retry-After. On PostgreSQL the counts are shared by every server process through the database.
 */
export async function registerRateLimit(
  app: FastifyInstance,
  store: Pick<Store, "kind" | "db">,
  repo: Pick<RateLimitRepo, "addCounts">,
  options: RateLimitOptions,
): Promise<void> {
  if (options.max <= 0) return;
  const shared =
    store.kind === "postgres" ? sharedRateLimitStore((batch) => repo.addCounts(store.db, batch)) : undefined;
  // Counts not yet added to the database are added before the store closes.
  if (shared) app.addHook("onClose", () => shared.close());
  await app.register(rateLimit, {
    global: true,
    hook: "preHandler",
    max: options.max,
    timeWindow: options.windowMs,
    enableDraftSpec: true,
    // Only requests made with an API key are limited: probes and admin operations are not.
    allowList: (request) => !request.principal || request.principal.keyId === "admin",
    keyGenerator: (request) => `${request.principal?.workspaceId}\u0000${request.principal?.keyId}`,
    ...(shared ? { store: shared.Store } : {}),
    errorResponseBuilder: (_request, context) =>
      new AppError(
        429,
        "rate_limited",
        "Too many requests",
        // context.after is the time left in the window, not the window: say each for what it is.
        `This API key sent more than ${context.max} requests in ${windowText(options.windowMs)}; ` +
          `retry in ${secondsText(Math.ceil(context.ttl / 1000))}.`,
      ),
  });
}

const secondsText = (seconds: number) => (seconds === 1 ? "1 second" : `${seconds} seconds`);

/** The window as a person says it: "a minute", "an hour", else in seconds. */
function windowText(ms: number): string {
  if (ms === 60_000) return "a minute";
  if (ms === 3_600_000) return "an hour";
  return secondsText(Math.round(ms / 1000));
}

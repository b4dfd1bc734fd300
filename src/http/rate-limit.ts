import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance } from "fastify";
import type { PrismaClient } from "../../generated/prisma/client.ts";
import { AppError } from "../domain/errors.ts";
import type { Store } from "../store/database.ts";

export interface RateLimitOptions {
  /** Requests per API key per window; 0 turns rate limiting off. */
  max: number;
  windowMs: number;
}

/**
 * Rate limiting per API key (@fastify/rate-limit), after authentication so the key is known.
 * Answers carry RateLimit-Limit/Remaining/Reset; an exceeded limit is 429 rate_limited with
 * Retry-After. On PostgreSQL the counts live in the database, so every server process shares them.
 */
export async function registerRateLimit(app: FastifyInstance, store: Store, options: RateLimitOptions): Promise<void> {
  if (options.max <= 0) return;
  await app.register(rateLimit, {
    global: true,
    hook: "preHandler",
    max: options.max,
    timeWindow: options.windowMs,
    enableDraftSpec: true,
    // Only requests made with an API key are limited: probes and admin operations are not.
    allowList: (request) => !request.principal || request.principal.keyId === "admin",
    keyGenerator: (request) => `${request.principal?.workspaceId}\u0000${request.principal?.keyId}`,
    ...(store.kind === "postgres" ? { store: databaseStore(store.db) } : {}),
    errorResponseBuilder: (_request, context) =>
      new AppError(
        429,
        "rate_limited",
        "Too many requests",
        `This API key sent more than ${context.max} requests in ${context.after}; retry in ${Math.ceil(context.ttl / 1000)} seconds.`,
      ),
  });
}

type Callback = (error: Error | null, result?: { current: number; ttl: number }) => void;

/** A fixed-window counter per API key in the rate_limit_buckets table: one upsert per request. */
function databaseStore(db: PrismaClient) {
  return class DatabaseRateLimitStore {
    incr(key: string, callback: Callback, timeWindow: number): void {
      const [workspaceId = "", keyId = ""] = key.split("\u0000");
      const now = Date.now();
      const windowStart = new Date(now - (now % timeWindow));
      db.$queryRaw<{ count: number }[]>`
        INSERT INTO rate_limit_buckets (workspace_id, key_id, window_start, count)
        VALUES (${workspaceId}, ${keyId}, ${windowStart.toISOString()}::timestamptz, 1)
        ON CONFLICT (workspace_id, key_id) DO UPDATE SET
          count = CASE WHEN rate_limit_buckets.window_start = EXCLUDED.window_start
                       THEN rate_limit_buckets.count + 1 ELSE 1 END,
          window_start = EXCLUDED.window_start
        RETURNING count`
        .then(([row]) => callback(null, { current: row?.count ?? 1, ttl: windowStart.getTime() + timeWindow - now }))
        .catch((error: Error) => callback(error));
    }

    child() {
      return new DatabaseRateLimitStore();
    }
  };
}

import { createHash, timingSafeEqual } from "node:crypto";
import { formatApiKey, parseApiKey } from "../../domain/api-key.ts";
import { UnauthorizedError } from "../../domain/errors.ts";
import { randomBase62 } from "../../domain/ids.ts";
import type { Store } from "../../platform/db/database.ts";
import type { ApiKeyRepo } from "./workspace-repo.ts";

export interface Principal {
  workspaceId: string;
  keyId: string;
}

/**
 * Only SHA-256 of a key's 190-bit random secret is stored (its format: domain/api-key.ts). A fast
 * hash is right here: the secret is random, not a password.
 */
export function newApiKey(workspaceId: string, keyId: string): { key: string; secretHash: Buffer } {
  const secret = randomBase62(32);
  return {
    key: formatApiKey({ workspaceId, keyId, secret }),
    secretHash: sha256(secret),
  };
}

const sha256 = (text: string) => createHash("sha256").update(text).digest();

/** How long a verified key is trusted without asking the database again. */
export const KEY_CACHE_MS = 5_000;
const KEY_CACHE_SIZE = 10_000;

export interface AuthServiceDeps {
  store: Pick<Store, "db">;
  apiKeys: Pick<ApiKeyRepo, "find">;
  now?: () => number;
}

export function createAuthService({ store, apiKeys, now = Date.now }: AuthServiceDeps) {
  // Verified key → principal and expiry, kept in this process's memory only (as the request that
  // carried the key was). Map keeps insertion order, so the first entry is the oldest.
  const cache = new Map<string, { principal: Principal; expires: number }>();

  return {
    async authenticate(token: string | undefined): Promise<Principal> {
      if (!token) throw new UnauthorizedError();
      const hit = cache.get(token);
      if (hit && hit.expires > now()) return hit.principal;

      const parts = parseApiKey(token);
      if (!parts) throw new UnauthorizedError();
      const { secret, ...principal } = parts;
      const row = await apiKeys.find(store.db, principal.workspaceId, principal.keyId);
      if (!row || row.revokedAt !== null || !timingSafeEqual(Buffer.from(row.secretHash), sha256(secret))) {
        cache.delete(token);
        throw new UnauthorizedError("The API key is unknown or revoked.");
      }
      if (cache.size >= KEY_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
      cache.set(token, { principal, expires: now() + KEY_CACHE_MS });
      return principal;
    },

    /** Forgets cached verifications of a key, so its revocation holds at once in this process. */
    forget(workspaceId: string, keyId: string): void {
      for (const [token, entry] of cache) {
        if (entry.principal.workspaceId === workspaceId && entry.principal.keyId === keyId) cache.delete(token);
      }
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;

/**
 * Recently read audiences, per process, for GET …/audiences/:id (the hottest read of a client
 * that polls). An entry is trusted for ttlMs at most; it is dropped at once when this process
 * renames the audience, and when the database reports that another process did (see
 * src/platform/db/audience-notifications.ts). While no such reports can be received, nothing is cached.
 */
export interface CachedAudience {
  id: string;
  name: string;
}

export interface AudienceCache {
  /** The audience from memory, or from load (remembered if nothing changed meanwhile). */
  read(workspaceId: string, id: string, load: () => Promise<CachedAudience | null>): Promise<CachedAudience | null>;
  /** Forgets the audience: it changed, here or in another process. */
  invalidate(workspaceId: string, id: string): void;
  /** Whether change reports arrive; forgets everything either way (some may have been missed). */
  setLive(live: boolean): void;
}

export function createAudienceCache({
  ttlMs = 5_000,
  maxEntries = 10_000,
  now = Date.now,
}: {
  ttlMs?: number;
  maxEntries?: number;
  now?: () => number;
} = {}): AudienceCache {
  // Map keeps insertion order, so the first entry is the oldest.
  const entries = new Map<string, { audience: CachedAudience; expires: number }>();
  // Bumped by every invalidation: a read that started before one must not store what it loaded,
  // which may predate the change.
  let epoch = 0;
  let live = false;
  const keyOf = (workspaceId: string, id: string) => `${workspaceId} ${id}`;

  return {
    async read(workspaceId, id, load) {
      const key = keyOf(workspaceId, id);
      if (live) {
        const hit = entries.get(key);
        if (hit && hit.expires > now()) return hit.audience;
      }
      const started = epoch;
      const audience = await load();
      if (live && audience !== null && epoch === started) {
        entries.delete(key);
        if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
        entries.set(key, { audience, expires: now() + ttlMs });
      }
      return audience;
    },

    invalidate(workspaceId, id) {
      epoch++;
      entries.delete(keyOf(workspaceId, id));
    },

    setLive(isLive) {
      epoch++;
      entries.clear();
      live = isLive;
    },
  };
}

import { describe, expect, it } from "vitest";
import { type CachedAudience, createAudienceCache } from "../../src/features/audiences/audience-cache.ts";

const readers = { id: "aud_1", name: "Readers" };

/** A loader that counts its calls and answers from a mutable "database". */
function database(initial: CachedAudience | null) {
  const db = { row: initial, loads: 0 };
  const load = async () => {
    db.loads++;
    return db.row === null ? null : { ...db.row };
  };
  return { db, load };
}

describe("audience cache", () => {
  it("answers from memory while live and within the ttl, then loads again", async () => {
    let clock = 0;
    const cache = createAudienceCache({ ttlMs: 1_000, now: () => clock });
    cache.setLive(true);
    const { db, load } = database(readers);
    expect(await cache.read("ws_a", "aud_1", load)).toEqual(readers);
    db.row = { id: "aud_1", name: "Changed unseen" };
    expect(await cache.read("ws_a", "aud_1", load)).toEqual(readers);
    expect(db.loads).toBe(1);
    clock = 1_000;
    expect(await cache.read("ws_a", "aud_1", load)).toEqual({ id: "aud_1", name: "Changed unseen" });
    expect(db.loads).toBe(2);
  });

  it("remembers nothing while change reports cannot be received", async () => {
    const cache = createAudienceCache();
    const { db, load } = database(readers);
    await cache.read("ws_a", "aud_1", load);
    await cache.read("ws_a", "aud_1", load);
    expect(db.loads).toBe(2);
    cache.setLive(true);
    await cache.read("ws_a", "aud_1", load);
    cache.setLive(false);
    await cache.read("ws_a", "aud_1", load);
    expect(db.loads).toBe(4);
  });

  it("forgets an invalidated audience, and only that one", async () => {
    const cache = createAudienceCache();
    cache.setLive(true);
    const first = database(readers);
    const second = database({ id: "aud_2", name: "Writers" });
    await cache.read("ws_a", "aud_1", first.load);
    await cache.read("ws_a", "aud_2", second.load);
    first.db.row = { id: "aud_1", name: "Renamed" };
    cache.invalidate("ws_a", "aud_1");
    expect(await cache.read("ws_a", "aud_1", first.load)).toEqual({ id: "aud_1", name: "Renamed" });
    await cache.read("ws_a", "aud_2", second.load);
    expect([first.db.loads, second.db.loads]).toEqual([2, 1]);
  });

  it("keeps workspaces apart", async () => {
    const cache = createAudienceCache();
    cache.setLive(true);
    await cache.read("ws_a", "aud_1", async () => readers);
    expect(await cache.read("ws_b", "aud_1", async () => null)).toBeNull();
  });

  it("does not remember a read that a change overtook", async () => {
    const cache = createAudienceCache();
    cache.setLive(true);
    let release: (() => void) | undefined;
    const slow = cache.read("ws_a", "aud_1", async () => {
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return { id: "aud_1", name: "Before the rename" };
    });
    await Promise.resolve();
    cache.invalidate("ws_a", "aud_1");
    release?.();
    expect(await slow).toEqual({ id: "aud_1", name: "Before the rename" });
    expect(await cache.read("ws_a", "aud_1", async () => ({ id: "aud_1", name: "After" }))).toEqual({
      id: "aud_1",
      name: "After",
    });
  });

  it("never remembers an unknown audience, and evicts the oldest beyond its size", async () => {
    const cache = createAudienceCache({ maxEntries: 2 });
    cache.setLive(true);
    const { db, load } = database(null);
    await cache.read("ws_a", "aud_x", load);
    await cache.read("ws_a", "aud_x", load);
    expect(db.loads).toBe(2);
    const loads: string[] = [];
    const loader = (id: string) => async () => {
      loads.push(id);
      return { id, name: id };
    };
    for (const id of ["aud_1", "aud_2", "aud_3", "aud_1"]) await cache.read("ws_a", id, loader(id));
    expect(loads).toEqual(["aud_1", "aud_2", "aud_3", "aud_1"]);
  });
});

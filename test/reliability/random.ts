/** A seeded generator (mulberry32), so a run's request mix can be replayed with RELIABILITY_SEED. */
export function seededRandom(seed: number) {
  let state = seed;
  const random = (): number => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  /** A random subset of count distinct items. */
  const sample = <T>(items: readonly T[], count: number): T[] => {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
    }
    return copy.slice(0, count);
  };
  return { random, between, pick, sample };
}

export const seedFromEnv = () => Number(process.env.RELIABILITY_SEED ?? Date.now() % 2 ** 31);

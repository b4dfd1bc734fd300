import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { exportPlaces } from "../../src/features/exports/export-places.ts";

/** A file of a place, waiting for its client from now on. */
function holding(places: ReturnType<typeof exportPlaces>, key: string) {
  const place = places.take(key);
  const file = new Readable({ read() {} });
  file.on("error", () => {});
  place.hold(file);
  place.waiting();
  return { place, file };
}

describe("export places", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("cuts a file whose client has taken nothing for the write timeout, and gives its place back", () => {
    const places = exportPlaces({ concurrency: 1, perKey: 1, writeTimeoutMs: 30_000, stalledAfterMs: 60_000 });
    const { file } = holding(places, "a");
    vi.advanceTimersByTime(29_999);
    expect(() => places.take("b")).toThrow(expect.objectContaining({ status: 503 }));
    expect(file.destroyed).toBe(false);
    vi.advanceTimersByTime(1);
    expect(file.destroyed).toBe(true);
    expect(file.errored?.message).toContain("took nothing for 30000 ms");
    expect(() => places.take("b")).not.toThrow();
  });

  it("measures only the wait for the client: one that keeps taking, or a file being read, is never cut", () => {
    const places = exportPlaces({ concurrency: 2, perKey: 2, writeTimeoutMs: 1_000, stalledAfterMs: 1_000 });
    const reading = holding(places, "a");
    for (let i = 0; i < 20; i++) {
      vi.advanceTimersByTime(900);
      reading.place.taken();
      reading.place.waiting();
    }
    expect(reading.file.destroyed).toBe(false);
    // The file waits for the database, not for its client.
    reading.place.taken();
    vi.advanceTimersByTime(60_000);
    expect(reading.file.destroyed).toBe(false);
    holding(places, "a");
    expect(() => places.take("b")).toThrow(expect.objectContaining({ status: 503 }));
  });

  it("gives a stalled reader's place to an export the server would refuse, the longest stalled first", () => {
    const places = exportPlaces({ concurrency: 2, perKey: 1, writeTimeoutMs: 30_000, stalledAfterMs: 5_000 });
    const first = holding(places, "a");
    vi.advanceTimersByTime(1_000);
    const second = holding(places, "b");
    vi.advanceTimersByTime(3_999);
    expect(() => places.take("c")).toThrow(expect.objectContaining({ status: 503 }));
    vi.advanceTimersByTime(1);
    expect(() => places.take("c")).not.toThrow();
    expect([first.file.destroyed, second.file.destroyed]).toEqual([true, false]);
    expect(first.file.errored?.message).toContain("another export needed its place");
  });

  it("gives a key's stalled reader's place to the key's next export, and refuses it while the reader takes", () => {
    const places = exportPlaces({ concurrency: 4, perKey: 1, writeTimeoutMs: 30_000, stalledAfterMs: 5_000 });
    const held = holding(places, "a");
    vi.advanceTimersByTime(4_000);
    held.place.taken();
    held.place.waiting();
    vi.advanceTimersByTime(4_000);
    expect(() => places.take("a")).toThrow(expect.objectContaining({ status: 429, code: "too_many_exports" }));
    vi.advanceTimersByTime(1_000);
    expect(() => places.take("a")).not.toThrow();
    expect(held.file.destroyed).toBe(true);
  });
});

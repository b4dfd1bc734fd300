import { describe, expect, it } from "vitest";
import { createGate } from "../../src/platform/db/admission.ts";
import { StoreBusyError } from "../../src/platform/db/pg-errors.ts";

/** A task that runs until its release() is called. */
function held() {
  let release = () => {};
  const done = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { task: () => done, release };
}

describe("the write gate", () => {
  it("runs `concurrency` callers at once and hands each freed place to the next in line", async () => {
    const gate = createGate({ concurrency: 2, queueLimit: 5, maxWaitMs: 60_000 });
    const [a, b, c] = [held(), held(), held()];
    const order: string[] = [];
    const runs = [a, b, c].map((h, i) =>
      gate.run(async () => {
        order.push(`start ${i}`);
        await h.task();
      }),
    );
    await Promise.resolve();
    expect([gate.active, gate.waiting]).toEqual([2, 1]);
    a.release();
    await runs[0];
    await expect.poll(() => order).toEqual(["start 0", "start 1", "start 2"]);
    b.release();
    c.release();
    await Promise.all(runs);
    expect([gate.active, gate.waiting]).toEqual([0, 0]);
  });

  it("refuses a caller at once when the queue is full", async () => {
    const gate = createGate({ concurrency: 1, queueLimit: 1, maxWaitMs: 60_000 });
    const h = held();
    const running = gate.run(h.task);
    const queued = gate.run(async () => "queued");
    await expect(gate.run(async () => "refused")).rejects.toBeInstanceOf(StoreBusyError);
    h.release();
    await running;
    expect(await queued).toBe("queued");
  });

  it("refuses a caller that waited too long, and frees its place in the queue", async () => {
    const gate = createGate({ concurrency: 1, queueLimit: 1, maxWaitMs: 20 });
    const h = held();
    const running = gate.run(h.task);
    await expect(gate.run(async () => "late")).rejects.toThrow(/no database connection became free within 20 ms/);
    expect(gate.waiting).toBe(0);
    h.release();
    await running;
    expect(await gate.run(async () => "next")).toBe("next");
  });

  it("releases its place when the task fails", async () => {
    const gate = createGate({ concurrency: 1, queueLimit: 0, maxWaitMs: 20 });
    await expect(gate.run(async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await gate.run(async () => "after")).toBe("after");
  });
});

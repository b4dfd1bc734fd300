import { afterEach, describe, expect, it } from "vitest";
import { audienceArchived } from "../../src/domain/errors.ts";
import { type JobState, LeaseLostError } from "../../src/features/imports/import-chunk.ts";
import type { ClaimedImport, ImportRepo } from "../../src/features/imports/import-repo.ts";
import { createImportRunner } from "../../src/features/imports/import-runner.ts";
import { StoreTimeoutError } from "../../src/platform/db/pg-errors.ts";
import { fakeStore } from "./fakes/fake-stores.ts";

type Outcome = Parameters<ImportRepo["finish"]>[3];

const FILE = "email\na@x.org\nb@x.org\n\nc@x.org\nd@x.org\ne@x.org\n";

/**
 * A runner with chunks of 2 rows over one job whose file is FILE (unless told), stored in parts of
 * 5 bytes; `apply` stands in for the chunk's transaction. Records what the runner did.
 */
function setUp(
  options: {
    file?: string;
    rowsRead?: number;
    soleProcess?: boolean;
    apply?: (lines: number[], n: number) => unknown;
  } = {},
) {
  const parts: Buffer[] = [];
  const bytes = Buffer.from(options.file ?? FILE);
  for (let at = 0; at < bytes.length; at += 5) parts.push(bytes.subarray(at, at + 5));
  const start = {
    ...{ rowsRead: options.rowsRead ?? 0, created: 0, merged: 0, unchanged: 0, rejected: 0 },
    ...{ accepted: 0, duplicates: 0, expired: 0 },
  };
  const job: ClaimedImport = {
    workspaceId: "ws",
    id: "imp_1",
    kind: "members",
    audienceId: null,
    parts: parts.length,
    errorCount: 0,
    ...start,
  };
  const seen = {
    chunks: [] as number[][],
    finished: [] as Outcome[],
    released: 0,
    errors: [] as unknown[],
    calls: [] as string[],
  };
  let claims = 0;
  const imports = {
    claim: async () => {
      seen.calls.push("claim");
      return ++claims === 1 ? job : undefined;
    },
    releaseAll: async () => void seen.calls.push("releaseAll"),
    renew: async () => true,
    release: async () => void seen.released++,
    finish: async (_tx: unknown, _job: unknown, _lease: unknown, outcome: Outcome) => void seen.finished.push(outcome),
    readPart: async (_db: unknown, _job: unknown, part: number) => parts[part] as Buffer,
    sweep: async () => 0,
  };
  const runner = createImportRunner({
    store: fakeStore,
    imports,
    leaseMs: 60_000,
    workers: 1,
    chunkRows: 2,
    ...(options.soleProcess === undefined ? {} : { soleProcess: options.soleProcess }),
    onError: (error) => seen.errors.push(error),
    async applyChunk(_job, _lease, _columns, rows, before): Promise<JobState | "cancelled"> {
      const lines = rows.map((row) => row.line);
      seen.chunks.push(lines);
      const result = await options.apply?.(lines, seen.chunks.length);
      if (result === "cancelled") return "cancelled";
      return { ...before, rowsRead: before.rowsRead + rows.length, created: before.created + rows.length };
    },
  });
  runners.push(runner);
  runner.start();
  /** Resolves once the runner is done with the job: it has looked for the next one. */
  const settled = () =>
    expect
      .poll(() => claims, { timeout: 5_000 })
      .toBeGreaterThan(1)
      .then(() => runner.stop());
  return { seen, settled };
}

const runners: ReturnType<typeof createImportRunner>[] = [];
afterEach(async () => {
  for (const runner of runners.splice(0)) await runner.stop();
});

describe("the import runner", () => {
  it("applies the rows in chunks, with the lines they start on, and ends the job succeeded", async () => {
    const { seen, settled } = setUp();
    await settled();
    expect(seen.chunks).toEqual([[2, 3], [5, 6], [7]]);
    expect(seen.finished).toEqual([{ status: "succeeded" }]);
  });

  it("on a store no other process can open, ends the leases left at start before it claims a job", async () => {
    const sole = setUp({ soleProcess: true });
    await sole.settled();
    expect(sole.seen.calls.slice(0, 2)).toEqual(["releaseAll", "claim"]);
    expect(sole.seen.calls.filter((call) => call === "releaseAll")).toHaveLength(1);
    expect(sole.seen.finished).toEqual([{ status: "succeeded" }]);
  });

  it("leaves other processes' leases alone when the store is shared", async () => {
    const shared = setUp();
    await shared.settled();
    expect(shared.seen.calls).not.toContain("releaseAll");
  });

  it("resumes after the rows its committed chunks applied", async () => {
    const { seen, settled } = setUp({ rowsRead: 3 });
    await settled();
    expect(seen.chunks).toEqual([[6, 7]]);
    expect(seen.finished).toEqual([{ status: "succeeded" }]);
  });

  it("applies the rows before a line it cannot read, then ends the job failed, naming the line", async () => {
    const { seen, settled } = setUp({ file: 'email\na@x.org\nb@x.org\nc@x.org\n"d@x.org\n' });
    await settled();
    expect(seen.chunks).toEqual([[2, 3], [4]]);
    expect(seen.finished).toEqual([
      { status: "failed", reason: "line 5: a quoted field is not closed before the end of the file" },
    ]);
  });

  it("stops at a cancelled job without ending it again", async () => {
    const { seen, settled } = setUp({ apply: (_lines, n) => (n === 2 ? "cancelled" : undefined) });
    await settled();
    expect(seen.chunks).toEqual([
      [2, 3],
      [5, 6],
    ]);
    expect(seen.finished).toEqual([]);
  });

  it("stops quietly when another runner took the job over", async () => {
    const { seen, settled } = setUp({
      apply: () => {
        throw new LeaseLostError("taken over");
      },
    });
    await settled();
    expect(seen.chunks).toEqual([[2, 3]]);
    expect([seen.finished, seen.errors]).toEqual([[], []]);
  });

  it("ends the job failed with the reason when a chunk is refused (its audience archived)", async () => {
    const { seen, settled } = setUp({
      apply: (_lines, n) => {
        if (n === 2) throw audienceArchived("aud_1");
      },
    });
    await settled();
    expect(seen.finished).toEqual([
      { status: "failed", reason: "Audience aud_1 is archived and cannot be changed; restore it first." },
    ]);
  });

  it("gives the job back, still running, when the database fails under it", async () => {
    const fault = new StoreTimeoutError("no answer");
    const { seen, settled } = setUp({
      apply: () => {
        throw fault;
      },
    });
    await settled();
    expect(seen.finished).toEqual([]);
    expect(seen.released).toBe(1);
    expect(seen.errors).toEqual([fault]);
  });
});

describe("the import runner with two workers", () => {
  it("runs another workspace's job while a large one is held up, and ends it first", async () => {
    const file = (n: number) =>
      Buffer.from(`email\n${Array.from({ length: n }, (_, i) => `m${i}@x.org`).join("\n")}\n`);
    const job = (workspaceId: string, parts: number): ClaimedImport => ({
      workspaceId,
      id: `imp_${workspaceId}`,
      kind: "members",
      audienceId: null,
      parts,
      errorCount: 0,
      rowsRead: 0,
      created: 0,
      merged: 0,
      unchanged: 0,
      ...{ accepted: 0, duplicates: 0, expired: 0 },
      rejected: 0,
    });
    const files: Record<string, Buffer> = { large: file(10), small: file(1) };
    // Claimed in the order the store would give them: the large one was queued first.
    const queue = [job("large", 1), job("small", 1)];
    const finished: string[] = [];
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const runner = createImportRunner({
      store: fakeStore,
      imports: {
        claim: async () => queue.shift(),
        releaseAll: async () => {},
        renew: async () => true,
        release: async () => {},
        finish: async (_tx, claimed) => void finished.push(claimed.workspaceId),
        readPart: async (_db, claimed) => files[claimed.workspaceId] as Buffer,
        sweep: async () => 0,
      },
      leaseMs: 60_000,
      chunkRows: 2,
      workers: 2,
      onError: (error) => {
        throw error;
      },
      async applyChunk(claimed, _lease, _columns, rows, before) {
        // The large job's chunks wait until the test lets them go on.
        if (claimed.workspaceId === "large") await held;
        return { ...before, rowsRead: before.rowsRead + rows.length };
      },
    });
    runners.push(runner);
    runner.start();
    await expect.poll(() => finished, { timeout: 5_000 }).toEqual(["small"]);
    release();
    await expect.poll(() => finished, { timeout: 5_000 }).toEqual(["small", "large"]);
  });
});

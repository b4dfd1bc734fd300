import { text } from "node:stream/consumers";
import { describe, expect, it } from "vitest";
import { resolveSettings } from "../../src/config/settings.ts";
import type { MemberExportRepo, SeqRange } from "../../src/features/exports/export-repo.ts";
import { createMemberExport } from "../../src/features/exports/export-service.ts";
import type { SqlClient } from "../../src/platform/db/sql-client.ts";

/**
 * An export over a fake store whose members are numbered within `segments` ([0, 100) unless
 * told otherwise), read 30 numbers at a time, two reads ahead: each range's CSV is one line
 * naming it. `fail` makes a read fail.
 */
const DEFAULTS = resolveSettings();

function setUp(
  options: { segments?: SeqRange[]; fail?: (read: number) => boolean; concurrency?: number; perKey?: number } = {},
) {
  const reads: SeqRange[] = [];
  const exports: MemberExportRepo = {
    segments: async () => options.segments ?? [{ from: 0, to: 100 }],
    fieldKeys: async () => [],
    async csvLines(_db, _selection, range) {
      reads.push(range);
      if (options.fail?.(reads.length)) throw new Error(`read ${reads.length} failed`);
      return `${range.from}-${range.to}\n`;
    },
    members: async () => [],
  };
  const service = createMemberExport({
    store: { exportDb: {} as SqlClient },
    exports,
    batchSize: 30,
    readAhead: 2,
    concurrency: options.concurrency ?? DEFAULTS.exports.concurrency,
    perKey: options.perKey ?? DEFAULTS.exports.perKey,
    writeTimeoutMs: DEFAULTS.exports.writeTimeoutMs,
    stalledAfterMs: DEFAULTS.exports.stalledAfterMs,
  });
  return { reads, open: (query = {}, key = "key") => service.open("ws", "csv", query, key) };
}

const HEADER = "id,email,alternativeEmails,firstName,lastName,role,company\n";

describe("member export streams", () => {
  it("reads the ranges in order, oldest first by default", async () => {
    const { open } = setUp();
    expect(await text(await open())).toBe(`${HEADER}0-30\n30-60\n60-90\n90-100\n`);
  });

  it("reads them backwards for DESC", async () => {
    const { open } = setUp();
    expect(await text(await open({ sortDirection: "DESC" }))).toBe(`${HEADER}90-100\n60-90\n30-60\n0-30\n`);
  });

  it("joins adjacent stretches and cuts them into ranges, the same ones both ways", async () => {
    const segments = [
      { from: 0, to: 10 },
      { from: 10, to: 20 },
      { from: 50, to: 100 },
    ];
    expect(await text(await setUp({ segments }).open())).toBe(`${HEADER}0-20\n50-80\n80-100\n`);
    const backwards = await setUp({ segments }).open({ sortDirection: "DESC" });
    expect(await text(backwards)).toBe(`${HEADER}80-100\n50-80\n0-20\n`);
  });

  it("reads two batches ahead of the client, not more", async () => {
    const { open, reads } = setUp();
    const file = await open();
    await new Promise((resolve) => setImmediate(resolve));
    expect(reads).toHaveLength(3);
    file.destroy();
  });

  it("fails the request when the first batch cannot be read", async () => {
    const { open } = setUp({ fail: (call) => call === 1 });
    await expect(open()).rejects.toThrow("read 1 failed");
  });

  it("ends the stream with the error when a later batch cannot be read", async () => {
    const { open } = setUp({ fail: (call) => call === 3 });
    const file = await open();
    await expect(text(file)).rejects.toThrow("read 3 failed");
  });

  it("refuses the paging parameters", async () => {
    const { open, reads } = setUp();
    await expect(open({ limit: 30, before: "x" })).rejects.toMatchObject({
      status: 400,
      code: "invalid_request",
      errors: [{ pointer: "/query/limit" }, { pointer: "/query/before" }],
    });
    expect(reads).toEqual([]);
  });
});

describe("member export places", () => {
  it("refuses a key's export beyond its share with 429 too_many_exports, before reading", async () => {
    const { open, reads } = setUp({ concurrency: 3, perKey: 1 });
    const held = await open({}, "a");
    const readsBefore = reads.length;
    await expect(open({}, "a")).rejects.toMatchObject({ status: 429, code: "too_many_exports", retryAfterSeconds: 5 });
    expect(reads).toHaveLength(readsBefore);
    held.destroy();
  });

  it("refuses any export beyond the process's places with 503 service_unavailable", async () => {
    const { open } = setUp({ concurrency: 2, perKey: 2 });
    const files = [await open({}, "a"), await open({}, "b")];
    await expect(open({}, "c")).rejects.toMatchObject({ status: 503, code: "service_unavailable" });
    for (const file of files) file.destroy();
  });

  it("gives the place back when the file is read whole, when it is destroyed, and when it fails to open", async () => {
    const { open } = setUp({ concurrency: 1, perKey: 1 });
    await text(await open());
    const left = await open();
    const closed = new Promise((resolve) => left.once("close", resolve));
    left.destroy();
    await closed;
    await expect(open({ limit: 5 })).rejects.toMatchObject({ status: 400 });
    const failing = setUp({ concurrency: 1, perKey: 1, fail: (call) => call === 1 });
    await expect(failing.open()).rejects.toThrow("read 1 failed");
    await expect(text(await failing.open())).resolves.toContain(HEADER);
    expect(await text(await open())).toContain(HEADER);
  });
});

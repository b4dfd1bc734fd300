import { text } from "node:stream/consumers";
import { describe, expect, it } from "vitest";
import type { PrismaClient } from "../../generated/prisma/client.ts";
import { createMemberExport } from "../../src/services/member-export.ts";
import type { Batch, MemberExportRepo, SeqRange } from "../../src/store/member-export.ts";

/**
 * An export over a fake store of member numbers [0, 100) read 30 at a time: each range's CSV is
 * one line naming it, and `next` goes on where the range ends unless `skip` says otherwise.
 */
function setUp(options: { skip?: (range: SeqRange) => number | null; fail?: (call: number) => boolean } = {}) {
  const reads: SeqRange[] = [];
  const batch = async (range: SeqRange, ascending: boolean): Promise<Batch<string>> => {
    reads.push(range);
    if (options.fail?.(reads.length)) throw new Error(`read ${reads.length} failed`);
    const next = options.skip ? options.skip(range) : ascending ? range.to : range.from;
    return { body: `${range.from}-${range.to}\n`, next };
  };
  const exports: MemberExportRepo = {
    bounds: async () => ({ from: 0, to: 100 }),
    fieldKeys: async (_db, _selection, range) => ({ body: [], next: range.to }),
    csvLines: (_db, _selection, range, ascending) => batch(range, ascending),
    members: async () => ({ body: [], next: null }),
  };
  const service = createMemberExport({ store: { db: {} as PrismaClient }, exports, batchSize: 30 });
  return { reads, open: (query = {}) => service.open("ws", "csv", query) };
}

const HEADER = "id,email,alternativeEmails,firstName,lastName,role,company\n";

describe("member export streams", () => {
  it("reads the ranges in order, oldest first by default", async () => {
    const { open } = setUp();
    expect(await text(await open())).toBe(`${HEADER}0-30\n30-60\n60-90\n90-100\n`);
  });

  it("reads them backwards for DESC", async () => {
    const { open } = setUp();
    expect(await text(await open({ sortDirection: "DESC" }))).toBe(`${HEADER}70-100\n40-70\n10-40\n0-10\n`);
  });

  it("goes on where the store says the next members are, and stops when it says there are none", async () => {
    const { open } = setUp({ skip: (range) => (range.from === 0 ? 80 : null) });
    expect(await text(await open())).toBe(`${HEADER}0-30\n80-100\n`);
  });

  it("reads one batch ahead of the client, not more", async () => {
    const { open, reads } = setUp();
    const file = await open();
    await new Promise((resolve) => setImmediate(resolve));
    expect(reads).toHaveLength(2);
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

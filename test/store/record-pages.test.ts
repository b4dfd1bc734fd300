// An instant's pages of members, walked with cursors both ways, over members spread across
// chunks (one of them empty) and across the runs of 256 bits a page spells out: every member
// listed once, in order, and hasNext/hasPrevious exact at every step. On the embedded store, and
// on PostgreSQL when TEST_DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordRepo } from "../../src/features/history/record-repo.ts";
import type { Store } from "../../src/platform/db/database.ts";
import { openRecordStore } from "../support/record-store.ts";

const ws = "ws_record_pages";
const AUDIENCE = "aud_record_pages";
const CREATED = new Date("2026-01-01T00:00:00.000Z");
const WRITTEN = new Date("2026-01-02T00:00:00.000Z");
const AS_OF = new Date("2026-01-03T00:00:00.000Z");

const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);
/** Members at both ends of runs and chunks, a run of 40, 300 across three runs; chunk 2 empty. */
const SEQS = [
  ...[0, 1, 255, 256, ...range(300, 40), 8191],
  ...[8192 + 5, 8192 + 6, ...range(8192 + 1000, 300)],
  ...[3 * 8192, 3 * 8192 + 8191],
];
/** Members not in the audience at the instant, beside those in it. */
const OUTSIDE = [2, 257, 8190, 8192, 2 * 8192 + 7, 3 * 8192 + 1];

describe("an instant's pages", () => {
  let store: Store;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ store, close } = await openRecordStore(ws, AUDIENCE, CREATED));
    await store.db.$executeRaw`UPDATE workspaces SET member_seq = ${4 * 8192} WHERE workspace_id = ${ws}`;
    const seqs = [...SEQS, ...OUTSIDE];
    await store.db.$executeRaw`
      INSERT INTO members (workspace_id, id, seq, created_at)
      SELECT ${ws}, 'm' || s, s, ${CREATED} FROM unnest(${seqs}::int[]) AS s`;
    // Each chunk's row as a write would have left it: its members after the write.
    await store.db.$executeRaw`
      INSERT INTO membership_record (workspace_id, audience_id, chunk, at, reason, entered, exited, members)
      SELECT ${ws}, ${AUDIENCE}, c.chunk, ${WRITTEN}, 'manual', c.bits, NULL, c.bits FROM (
        SELECT s >> 13 AS chunk, bit_or(set_bit(B'0'::bit(8192), s & 8191, 1)) AS bits
        FROM unnest(${SEQS}::int[]) AS s GROUP BY 1
      ) AS c`;
  });
  afterAll(() => close());

  const page = (ascending: boolean, limit: number, cursor?: number) =>
    recordRepo.pageAsOf(store.db, ws, AUDIENCE, { before: AS_OF, ascending, limit, cursor });

  /** Every page from one end to the other, following the cursor of each page's last member. */
  async function walk(ascending: boolean, limit: number) {
    const walked: number[] = [];
    let cursor: number | undefined;
    for (;;) {
      const p = await page(ascending, limit, cursor);
      expect(p.total).toBe(SEQS.length);
      expect(p.behind).toBe(cursor !== undefined);
      walked.push(...p.rows.map((row) => row.seq));
      expect(p.rows.map((row) => row.id)).toEqual(p.rows.map((row) => `m${row.seq}`));
      if (!p.more) return walked;
      expect(p.rows).toHaveLength(limit);
      cursor = p.rows.at(-1)?.seq;
    }
  }

  const ascendingSeqs = [...SEQS].sort((a, b) => a - b);

  it.each([1, 7, 41, 100, 1000])("walks all members in pages of %i, both ways", async (limit) => {
    expect(await walk(true, limit)).toEqual(ascendingSeqs);
    expect(await walk(false, limit)).toEqual([...ascendingSeqs].reverse());
  });

  it("starts past any cursor, members or not, and tells what lies behind it", async () => {
    for (const cursor of [0, 2, 255, 256, 8191, 8192, 8192 + 1299, 2 * 8192 + 7, 3 * 8192]) {
      const after = await page(true, 5, cursor);
      expect(after.rows.map((row) => row.seq)).toEqual(ascendingSeqs.filter((s) => s > cursor).slice(0, 5));
      expect(after.behind).toBe(ascendingSeqs.some((s) => s <= cursor));
      const before = await page(false, 5, cursor);
      expect(before.rows.map((row) => row.seq)).toEqual(
        [...ascendingSeqs]
          .reverse()
          .filter((s) => s < cursor)
          .slice(0, 5),
      );
      expect(before.behind).toBe(ascendingSeqs.some((s) => s >= cursor));
    }
  });

  it("has no members before the record's row", async () => {
    const p = await recordRepo.pageAsOf(store.db, ws, AUDIENCE, { before: WRITTEN, ascending: true, limit: 5 });
    expect([p.total, p.rows, p.more]).toEqual([0, [], false]);
  });
});

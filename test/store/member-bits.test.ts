// The SQL that builds member sets as chunks (chunksOf), and the sets spelled out in the process
// (knownChunksOf), lay bits out exactly as the service reads them (memberSetOf, membersOf): edge
// positions, sparse and dense sets, groups.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "../../generated/prisma/client.ts";
import {
  base64Of,
  bitsOfText,
  chunkBytes,
  chunksOf,
  chunkText,
  knownChunksOf,
  knownGroupedChunksOf,
} from "../../src/features/membership/member-bits-sql.ts";
import { type MemberSet, memberSetOf } from "../../src/features/membership/member-set.ts";
import type { Store } from "../../src/platform/db/database.ts";
import { jsonRows } from "../../src/platform/db/json-rows.ts";
import { openTestStore } from "../support/live-server.ts";

let store: Store;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ store, close } = await openTestStore());
});
afterAll(() => close());

const EDGES = [0, 1, 62, 63, 64, 127, 128, 4095, 8127, 8128, 8190, 8191, 8192, 8193, 16383, 16384, 1_000_000];
const random = Array.from({ length: 500 }, (_, i) => (i * 7_919 + 13) % 40_000);
const dense = Array.from({ length: 8192 }, (_, i) => 8192 + i);
// Members of one chunk: up to 16 travel as positions, more as hex digits (chunkText).
const inOneChunk = (n: number) => Array.from({ length: n }, (_, i) => 3 * 8192 + 8191 - i * 500);

async function readChunks(chunks: Prisma.Sql): Promise<MemberSet> {
  const rows = await store.db.$queryRaw<{ chunk: number; bits: string }[]>`
    SELECT c.chunk, ${base64Of(Prisma.sql`c.bits`)} AS bits FROM ${chunks} AS c`;
  return new Map(rows.map((row) => [row.chunk, chunkBytes(row.bits)]));
}

const chunksInSql = (seqs: number[]) =>
  readChunks(chunksOf(Prisma.sql`SELECT v.seq::int AS seq FROM ${jsonRows("v", { seq: seqs })}`));

const asHex = (set: MemberSet) =>
  Object.fromEntries(
    [...set].sort(([a], [b]) => a - b).map(([chunk, bytes]) => [chunk, Buffer.from(bytes).toString("hex")]),
  );

describe("member set chunks built in SQL", () => {
  it.each([
    ["edge positions", EDGES],
    ["a sparse set", random],
    ["a full chunk and a lone bit", [...dense, 3]],
    ["one member", [42]],
    ["16 members of one chunk", inOneChunk(16)],
    ["17 members of one chunk", inOneChunk(17)],
    ["a member named twice", [5, 9000, 5]],
  ])("match the service's layout for %s", async (_case, seqs) => {
    expect(asHex(await chunksInSql(seqs))).toEqual(asHex(memberSetOf(seqs)));
    expect(asHex(await readChunks(knownChunksOf(seqs)))).toEqual(asHex(memberSetOf(seqs)));
  });

  it("arrive as the same bits per group when spelled out in the process", async () => {
    const groups = { a: EDGES, b: random, c: [9, 8200], d: [...dense, 3] };
    const sets = Object.entries(groups).map(([grp, seqs]) => ({ grp, seqs }));
    const rows = await store.db.$queryRaw<{ grp: string; chunk: number; bits: string }[]>`
      SELECT g.grp, g.chunk, ${base64Of(Prisma.sql`g.bits`)} AS bits FROM ${knownGroupedChunksOf(sets)} AS g`;
    for (const [grp, seqs] of Object.entries(groups)) {
      const arrived = new Map(rows.filter((r) => r.grp === grp).map((r) => [r.chunk, chunkBytes(r.bits)]));
      expect(asHex(arrived), grp).toEqual(asHex(memberSetOf(seqs)));
      expect(asHex(arrived), grp).toEqual(asHex(await chunksInSql(seqs)));
    }
  });

  it("arrive as sent when a chunk travels as chunkText's text", async () => {
    for (const seqs of [EDGES, random, [...dense, 3], inOneChunk(16), inOneChunk(17), [8191]]) {
      const set = memberSetOf(seqs);
      const texts = [...set].map(([chunk, bytes]) => ({ chunk, text: chunkText(bytes) }));
      const arrived = await readChunks(
        Prisma.sql`(SELECT v.chunk::int AS chunk, ${bitsOfText(Prisma.sql`v.text`)} AS bits
          FROM ${jsonRows("v", { chunk: texts.map((t) => t.chunk), text: texts.map((t) => t.text) })})`,
      );
      expect(asHex(arrived)).toEqual(asHex(set));
    }
    expect(chunkText(memberSetOf(inOneChunk(16)).get(3) as Uint8Array)).toMatch(/^p(\d+,){15}\d+$/);
    expect(chunkText(memberSetOf(inOneChunk(17)).get(3) as Uint8Array)).toMatch(/^[0-9a-f]{2048}$/);
  });
});

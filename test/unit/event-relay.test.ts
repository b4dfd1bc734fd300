import { describe, expect, it } from "vitest";
import { createEventRelay, type EventRelayDeps } from "../../src/features/events/event-relay.ts";
import { type OutboxRow, PUBLISHED_MEANWHILE, type PublishedEvent } from "../../src/features/events/event-repo.ts";
import { CHUNK_BITS } from "../../src/features/membership/member-set.ts";
import { fakeStore } from "./fakes/fake-stores.ts";

type Chunk = { part: number; chunk: number; bytes: Uint8Array };

/** A chunk holding one member: the first of its 8,192 numbers. */
const oneMember = (chunk: number, part = 0): Chunk => {
  const bytes = new Uint8Array(CHUNK_BITS / 8);
  bytes[0] = 0b1000_0000;
  return { part, chunk, bytes };
};

/**
 * An outbox in memory with the relay's statements, counting the statements each kind took;
 * `webhooks` is what the read says of the workspace's webhooks.
 */
function fakeOutbox(entries: { row: OutboxRow; chunks: Chunk[] }[], webhooks = false) {
  const outbox = [...entries];
  const feed: PublishedEvent[] = [];
  const statements = { lockAndRead: 0, transactions: 0 };
  let lastSequence = 0;
  const events: EventRelayDeps["events"] = {
    pendingWorkspaces: async () => (outbox.length > 0 ? ["ws"] : []),
    lockAndRead: async (_tx, _ws, limits) => {
      statements.transactions++;
      statements.lockAndRead++;
      const read = outbox.slice(0, limits.entries);
      // The first chunkLimit chunks of the entries read, entry by entry.
      const chunks = read.flatMap((e) => e.chunks.map((chunk) => ({ id: e.row.id, chunk }))).slice(0, limits.chunks);
      const byEntry = new Map<bigint, Chunk[]>();
      for (const { id, chunk } of chunks) byEntry.set(id, [...(byEntry.get(id) ?? []), chunk]);
      // The members of the first namedChunks chunks, each chunk's first number (oneMember's).
      const seqs = chunks.slice(0, limits.namedChunks).map(({ chunk }) => chunk.chunk * CHUNK_BITS);
      const names = new Map(seqs.map((seq) => [seq, `m${seq / CHUNK_BITS}`]));
      return { lastSequence, entries: read.map((entry) => entry.row), chunks: byEntry, names, webhooks };
    },
    publish: async (_tx, _ws, published, { done, taken }) => {
      feed.push(...published);
      lastSequence = published.at(-1)?.sequence ?? lastSequence;
      for (const id of done)
        outbox.splice(
          outbox.findIndex((e) => e.row.id === id),
          1,
        );
      const entry = taken && outbox.find((e) => e.row.id === taken.outboxId);
      if (entry && taken) {
        entry.chunks = entry.chunks.filter((c) => !taken.chunks.some((d) => d.part === c.part && d.chunk === c.chunk));
      }
    },
    dropTombstonesIfIdle: async () => {},
  };
  return { events, feed, statements };
}

const changed = (id: number, audienceId: string, chunks: Chunk[]) => ({
  row: {
    id: BigInt(id),
    type: "audience.members_changed" as const,
    audienceId,
    data: { reason: "manual" },
    createdAt: new Date("2026-11-23T00:00:00Z"),
  },
  chunks,
});
const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => oneMember(from + i));

describe("event relay", () => {
  it("reads a transaction's entries, their chunks and their members' ids with the head's lock, in one statement", async () => {
    const outbox = fakeOutbox([
      changed(1, "aud_a", range(0, 1)),
      changed(2, "aud_b", [oneMember(0), oneMember(5, 1)]),
      changed(3, "aud_c", range(7, 1)),
    ]);
    await createEventRelay({ store: fakeStore, events: outbox.events }).publish("ws");
    expect(outbox.statements).toEqual({ lockAndRead: 1, transactions: 1 });
    expect(outbox.feed.map((e) => [e.sequence, e.audienceId, e.data.entered, e.data.left])).toEqual([
      [1, "aud_a", ["m0"], []],
      [2, "aud_b", ["m0"], ["m5"]],
      [3, "aud_c", ["m7"], []],
    ]);
  });

  it("publishes at most 4 chunks a transaction: an entry past them continues in the next, its events consecutive", async () => {
    const outbox = fakeOutbox([
      changed(1, "aud_a", range(0, 3)),
      changed(2, "aud_b", range(100, 6)),
      changed(3, "aud_c", range(200, 1)),
    ]);
    await createEventRelay({ store: fakeStore, events: outbox.events }).publish("ws");
    const ids = (from: number, count: number) => Array.from({ length: count }, (_, i) => `m${from + i}`);
    expect(outbox.feed.map((e) => [e.sequence, e.audienceId, e.data.entered])).toEqual([
      [1, "aud_a", ids(0, 3)],
      [2, "aud_b", ids(100, 1)],
      [3, "aud_b", ids(101, 4)],
      [4, "aud_b", ids(105, 1)],
      [5, "aud_c", ids(200, 1)],
    ]);
    expect(outbox.statements).toEqual({ lockAndRead: 3, transactions: 3 });
  });
});

describe("event relay, when another relay published the entries it read", () => {
  it("rolls its transaction back and reads again, publishing each entry once", async () => {
    const outbox = fakeOutbox([changed(1, "aud_a", range(0, 2))]);
    const publish = outbox.events.publish;
    let refused = 0;
    // The first publishing finds its entries gone (another relay committed them after the read):
    // its statement fails with the code of its own, as the database reports it.
    outbox.events.publish = async (...args) => {
      if (refused++ === 0) throw Object.assign(new Error("published meanwhile"), { code: PUBLISHED_MEANWHILE });
      return publish(...args);
    };
    await createEventRelay({ store: fakeStore, events: outbox.events }).publish("ws");
    expect(outbox.statements.transactions).toBe(2);
    expect(outbox.feed.map((e) => [e.sequence, e.audienceId, e.data.entered])).toEqual([[1, "aud_a", ["m0", "m1"]]]);
  });

  it("lets any other failure of the publishing through, reading nothing again", async () => {
    const outbox = fakeOutbox([changed(1, "aud_a", range(0, 2))]);
    const failure = Object.assign(new Error("duplicate key"), { code: "23505" });
    outbox.events.publish = async () => {
      throw failure;
    };
    await expect(createEventRelay({ store: fakeStore, events: outbox.events }).publish("ws")).rejects.toBe(failure);
    expect([outbox.statements.transactions, outbox.feed]).toEqual([1, []]);
  });
});

describe("event relay, telling the deliverer", () => {
  const publishWith = async (webhooks: boolean) => {
    const outbox = fakeOutbox([changed(1, "aud_a", range(0, 1))], webhooks);
    let pokes = 0;
    await createEventRelay({ store: fakeStore, events: outbox.events, onDeliveries: () => pokes++ }).publish("ws");
    return pokes;
  };

  it("pokes it after publishing events that a webhook of the workspace may select", async () => {
    expect(await publishWith(true)).toBe(1);
  });

  it("leaves it alone when no webhook selects them", async () => {
    expect(await publishWith(false)).toBe(0);
  });
});

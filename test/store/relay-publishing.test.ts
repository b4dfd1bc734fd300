// The relay's publishing statement is sent with its COMMIT on PostgreSQL (withCommit), so nobody
// reads its answer: when some entries it read were published meanwhile by another relay, the
// statement itself fails (migration relay_published_meanwhile), the transaction rolls back and
// the relay reads again; any other failure reaches the relay's caller as before. The stale read is
// what a relay gets when its lock's statement took its snapshot before another relay committed
// and its lock after (the head's row as it stands, the outbox as it was): a window of
// microseconds between two steps of one statement, which no test can hold open, so the second
// relay is handed a read made before the first published, with the head it locked. On the
// embedded store, and on PostgreSQL when TEST_DATABASE_URL is set; there two relays also race for
// real, until one's read was stale.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "../../generated/prisma/client.ts";
import { workspaceRepo } from "../../src/features/admin/workspace-repo.ts";
import { eventFeedRepo } from "../../src/features/events/event-feed-repo.ts";
import { createEventRelay } from "../../src/features/events/event-relay.ts";
import { eventRepo, publishedMeanwhile, type RelayRead } from "../../src/features/events/event-repo.ts";
import { outboxRepo } from "../../src/features/events/outbox-repo.ts";
import type { OutboxEntry } from "../../src/features/membership/outbox-entries.ts";
import { webhookRepo } from "../../src/features/webhooks/webhook-repo.ts";
import type { Store } from "../../src/platform/db/database.ts";
import { sqlState } from "../../src/platform/db/pg-errors.ts";
import { openTestStore } from "../support/live-server.ts";

let store: Store;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ store, close } = await openTestStore());
});
afterAll(() => close());

const LIMITS = { entries: 200, chunks: 5, namedChunks: 4 };

let workspaces = 0;
async function workspace(): Promise<string> {
  const id = `ws_relay_publishing_${++workspaces}`;
  await workspaceRepo.create(store.db, { id, name: id });
  return id;
}

/** Records audience.created entries in the workspace's outbox, as a write does. */
async function record(ws: string, names: string[]): Promise<void> {
  const entries: OutboxEntry[] = names.map((name) => ({ type: "audience.created", audienceId: `aud_${name}`, name }));
  const appended = outboxRepo.appendSql(ws, entries);
  await store.transaction((tx) => tx.$executeRaw`WITH ${appended as Prisma.Sql} SELECT 1`);
}

async function webhook(
  ws: string,
  id: string,
  filter: { types?: string[]; audienceIds?: string[]; enabled?: boolean },
) {
  await store.transaction((tx) =>
    webhookRepo.create(tx, ws, {
      id,
      url: "https://receiver.example/hook",
      types: (filter.types ?? null) as never,
      audienceIds: filter.audienceIds ?? null,
      description: "",
      enabled: filter.enabled ?? true,
      secret: "whsec_test",
    }),
  );
}

/** The outbox as the relay reads it now (the head's lock is let go at once). */
const readNow = (ws: string) => store.transaction((tx) => eventRepo.lockAndRead(tx, ws, LIMITS));

/** The feed as a reader sees it: sequence, type and audience of each event. */
async function feed(ws: string) {
  const page = await eventFeedRepo.page(store.db, ws, { after: 0, limit: 100 });
  return page.events.map((e) => [e.sequence, e.type, (e.data as { audienceId?: string }).audienceId]);
}

async function count(table: "webhook_deliveries" | "event_outbox", ws: string): Promise<number> {
  const [row] = await store.db.$queryRaw<{ n: number }[]>(
    Prisma.sql`SELECT count(*)::int AS n FROM ${Prisma.raw(table)} WHERE workspace_id = ${ws}`,
  );
  return row?.n ?? 0;
}

/**
 * A relay whose first read is `stale` with the head it locks (what its statement reads when
 * another relay committed between its snapshot and its lock), and whose later reads are real.
 */
function relayReading(stale: RelayRead, lastSequence: (locked: number) => number = (locked) => locked) {
  const reads: string[] = [];
  let pokes = 0;
  const relay = createEventRelay({
    store,
    events: {
      ...eventRepo,
      async lockAndRead(tx, ws, limits) {
        const read = await eventRepo.lockAndRead(tx, ws, limits);
        if (!read || reads.length > 0) {
          reads.push("read");
          return read;
        }
        reads.push("stale");
        return { ...stale, lastSequence: lastSequence(read.lastSequence) };
      },
    },
    onDeliveries: () => pokes++,
  });
  return { relay, reads, pokes: () => pokes };
}

describe("the relay, when another relay published what it read", () => {
  it("rolls back and reads again: every event once, in order, and every delivery once", async () => {
    const ws = await workspace();
    await webhook(ws, "whk_all", {});
    await record(ws, ["a", "b", "c"]);
    const stale = (await readNow(ws)) as RelayRead;
    await createEventRelay({ store, events: eventRepo }).publish(ws);

    const late = relayReading(stale);
    await late.relay.publish(ws);
    // Read again: nothing left, so nothing published, and the deliverer not told.
    expect([late.reads, late.pokes()]).toEqual([["stale", "read"], 0]);
    expect(await feed(ws)).toEqual([
      [1, "audience.created", "aud_a"],
      [2, "audience.created", "aud_b"],
      [3, "audience.created", "aud_c"],
    ]);
    expect(await eventFeedRepo.head(store.db, ws)).toBe(3);
    expect(await count("webhook_deliveries", ws)).toBe(3);

    // And the relay goes on: what is recorded next follows, its delivery queued and announced.
    await record(ws, ["d"]);
    await late.relay.publish(ws);
    expect([late.pokes(), (await feed(ws)).at(-1), await count("webhook_deliveries", ws)]).toEqual([
      1,
      [4, "audience.created", "aud_d"],
      4,
    ]);
  });

  it("publishes what is left when only part of what it read was published", async () => {
    const ws = await workspace();
    await record(ws, ["a", "b"]);
    const stale = (await readNow(ws)) as RelayRead;
    // Another relay publishes the first entry only (as if it had read no further).
    await createEventRelay({
      store,
      events: {
        ...eventRepo,
        lockAndRead: async (tx, w, limits) => {
          const read = await eventRepo.lockAndRead(tx, w, limits);
          return read && { ...read, entries: read.entries.slice(0, 1) };
        },
      },
    }).publish(ws);
    expect(await count("event_outbox", ws)).toBe(1);

    const late = relayReading(stale);
    await late.relay.publish(ws);
    expect(late.reads).toEqual(["stale", "read"]);
    expect(await feed(ws)).toEqual([
      [1, "audience.created", "aud_a"],
      [2, "audience.created", "aud_b"],
    ]);
    expect(await count("event_outbox", ws)).toBe(0);
  });
});

describe("two relays at once, on PostgreSQL", () => {
  /**
   * A relay on the store whose transactions that failed as published meanwhile are counted: the
   * race is real here (one relay's lock statement between its snapshot and its lock while the
   * other commits), so it happens now and then, not on cue.
   */
  function countingRelay(meanwhile: { count: number }) {
    const transaction: Store["transaction"] = (fn) =>
      store.transaction(fn).catch((error: unknown) => {
        if (publishedMeanwhile(error)) meanwhile.count++;
        throw error;
      });
    return createEventRelay({ store: { db: store.db, transaction }, events: eventRepo });
  }

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    "publish every entry once, in the order recorded, while a writer records more, also when one's read was stale",
    async () => {
      const ws = await workspace();
      await webhook(ws, "whk_all", {});
      const meanwhile = { count: 0 };
      const recorded: string[] = [];
      // Rounds until the race has happened at least once (it does about once in 50 entries).
      for (let round = 0; meanwhile.count === 0; round++) {
        expect(round, "no relay read entries published meanwhile").toBeLessThan(40);
        const names = Array.from({ length: 30 }, (_, i) => `r${round}_${i}`);
        let writing = true;
        const writer = (async () => {
          for (const name of names) await record(ws, [name]);
          writing = false;
        })();
        // Each relay publishes until the writer is done and nothing is left: no sleep, no timer.
        const relays = [0, 1].map(async () => {
          const relay = countingRelay(meanwhile);
          while (writing || (await count("event_outbox", ws)) > 0) await relay.publish(ws);
        });
        await Promise.all([writer, ...relays]);
        recorded.push(...names);
      }
      const page = await eventFeedRepo.page(store.db, ws, { after: 0, limit: recorded.length });
      expect(page.events.map((e) => [e.sequence, (e.data as { audienceId: string }).audienceId])).toEqual(
        recorded.map((name, i) => [i + 1, `aud_${name}`]),
      );
      expect(await count("webhook_deliveries", ws)).toBe(recorded.length);
    },
  );
});

describe("the relay's publishing, failing for another reason", () => {
  it("fails the relay with that error, committing nothing of it, and the next run publishes", async () => {
    const ws = await workspace();
    await record(ws, ["a"]);
    await createEventRelay({ store, events: eventRepo }).publish(ws);
    await record(ws, ["b"]);
    // Its entries intact, but numbered from a head one behind: sequence 1 is taken.
    const late = relayReading((await readNow(ws)) as RelayRead, (locked) => locked - 1);
    const failure = await late.relay.publish(ws).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect([sqlState(failure), publishedMeanwhile(failure), late.reads]).toEqual(["23505", false, ["stale"]]);
    expect([await feed(ws), await count("event_outbox", ws)]).toEqual([[[1, "audience.created", "aud_a"]], 1]);

    await createEventRelay({ store, events: eventRepo }).publish(ws);
    expect(await feed(ws)).toEqual([
      [1, "audience.created", "aud_a"],
      [2, "audience.created", "aud_b"],
    ]);
  });
});

describe("the relay's read, on whether to tell the deliverer", () => {
  const mayDeliver = async (ws: string) => (await readNow(ws))?.webhooks;

  it("says yes only when an enabled webhook selects the type and audience of an entry read", async () => {
    const ws = await workspace();
    await record(ws, ["a"]);
    expect(await mayDeliver(ws)).toBe(false);
    await webhook(ws, "whk_off", { enabled: false });
    await webhook(ws, "whk_renamed", { types: ["audience.renamed"] });
    await webhook(ws, "whk_other", { audienceIds: ["aud_other"] });
    await webhook(ws, "whk_members", { types: ["members.created"], audienceIds: ["aud_a"] });
    expect(await mayDeliver(ws)).toBe(false);
    await webhook(ws, "whk_a", { types: ["audience.renamed", "audience.created"], audienceIds: ["aud_a"] });
    expect(await mayDeliver(ws)).toBe(true);
  });

  it("says yes for a webhook of every event", async () => {
    const ws = await workspace();
    await record(ws, ["a"]);
    await webhook(ws, "whk_all", {});
    expect(await mayDeliver(ws)).toBe(true);
  });
});

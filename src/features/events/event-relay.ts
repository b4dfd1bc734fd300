import { newId } from "../../domain/ids.ts";
import type { Store } from "../../platform/db/database.ts";
import { type SqlClient, withCommit } from "../../platform/db/sql-client.ts";
import { eventsPublished } from "../../platform/metrics.ts";
import { type ChangeReason, membersOf } from "../membership/member-set.ts";
import { createdEvents, type EventDraft, membersChangedEvents, plainEvents } from "../membership/outbox-entries.ts";
import {
  type EventRepo,
  type OutboxChunk,
  type OutboxRow,
  type PublishedEvent,
  publishedMeanwhile,
} from "./event-repo.ts";

export interface EventRelayDeps {
  store: Pick<Store, "transaction" | "db">;
  events: Pick<EventRepo, "pendingWorkspaces" | "lockAndRead" | "publish" | "dropTombstonesIfIdle">;
  /** Told when deliveries may have been queued (the deliverer looks for due ones). */
  onDeliveries?: () => void;
}

/**
 * What one relay transaction publishes at most: entries, and member set chunks (8,192 members
 * each). The embedded store runs one transaction at a time, so every other workspace's request
 * waits for a relay transaction under way: 4 chunks keep it to tens of milliseconds there, where
 * 16 (a rule that moved 200,000 members) held it for most of a second.
 */
const ENTRIES_PER_TRANSACTION = 200;
const CHUNKS_PER_TRANSACTION = 4;

const namesMembers = (entry: OutboxRow) =>
  entry.type === "audience.members_changed" || entry.type === "members.created";

/** An entry's member numbers in this transaction, by part (entered or created, left). */
interface Taken {
  parts: number[][];
  /** Chunks published now, and whether any remain for a later transaction. */
  chunks: { part: number; chunk: number }[];
  finished: boolean;
}

/**
 * Publishes outbox entries as the workspace's event feed. One relay at a time per workspace (the
 * head's row lock; another process's relay skips a workspace being published), each transaction
 * giving its events the next sequences and committing them at once: a reader sees events in
 * sequence order with no gaps. Entries are published in the order they were recorded; member
 * sets are published a few chunks per transaction, so that the store stays free for requests
 * meanwhile, and a large set's events stay consecutive (its entry is the oldest until it is
 * done). A transaction is two statements: the lock with the entries, their chunks and the ids of
 * the members it publishes, and the publishing, sent with the COMMIT on PostgreSQL (withCommit):
 * two round trips. The entries are read in the lock's statement, from a snapshot that may predate
 * another relay's commit; the publishing deletes what it publishes and fails when some of it was
 * gone (published meanwhile, event-repo.ts), which rolls the transaction back, to read again.
 */
export function createEventRelay(deps: EventRelayDeps) {
  const { store, events } = deps;

  /**
   * The member numbers of the entries' sets that fit in one transaction, in entry order: an entry
   * that does not fit whole takes what is left, and the entries after it wait. `chunksOf` holds
   * the first CHUNKS_PER_TRANSACTION + 1 chunks of the entries, in entry order: enough to tell
   * whether the last entry taken is taken whole. What it takes is the first CHUNKS_PER_TRANSACTION
   * of them, whose members lockAndRead named.
   */
  function takeMembers(entries: OutboxRow[], chunksOf: Map<bigint, OutboxChunk[]>): Map<bigint, Taken> {
    const taken = new Map<bigint, Taken>();
    let budget = CHUNKS_PER_TRANSACTION;
    for (const entry of entries.filter(namesMembers)) {
      const chunks = chunksOf.get(entry.id) ?? [];
      if (chunks.length > 0 && budget === 0) break;
      const now = chunks.slice(0, budget);
      budget -= now.length;
      const parts: number[][] = [[], []];
      for (const { part, chunk, bytes } of now) {
        for (const seq of membersOf(new Map([[chunk, bytes]]))) parts[part]?.push(seq);
      }
      taken.set(entry.id, { parts, chunks: now, finished: now.length === chunks.length });
      if (now.length < chunks.length) break;
    }
    return taken;
  }

  /** Publishes one bounded part of the workspace's outbox; true when more may be pending. */
  async function publishSome(workspaceId: string): Promise<boolean> {
    let outcome: { more: boolean; tellDeliverer: boolean; published: string[] };
    try {
      outcome = await store.transaction((tx) => publishIn(tx, workspaceId));
    } catch (error) {
      // Rolled back (not retried by store.transaction): read again what is left.
      if (publishedMeanwhile(error)) return true;
      throw error;
    }
    const { more, tellDeliverer, published } = outcome;
    for (const type of published) eventsPublished.inc({ type });
    // Only once committed can another connection (the deliverer's) see the deliveries.
    if (tellDeliverer) deps.onDeliveries?.();
    return more;
  }

  async function publishIn(tx: SqlClient, workspaceId: string) {
    const read = await events.lockAndRead(tx, workspaceId, {
      entries: ENTRIES_PER_TRANSACTION,
      chunks: CHUNKS_PER_TRANSACTION + 1,
      namedChunks: CHUNKS_PER_TRANSACTION,
    });
    if (!read) return { more: false, tellDeliverer: false, published: [] };
    const { entries } = read;
    if (entries.length === 0) {
      await events.dropTombstonesIfIdle(withCommit(tx), workspaceId);
      return { more: false, tellDeliverer: false, published: [] };
    }
    const taken = takeMembers(entries, read.chunks);
    // A number without a name cannot happen (tombstones outlive every entry naming them); skip it.
    const idsOf = (seqs: number[] = []) => seqs.flatMap((seq) => read.names.get(seq) ?? []);

    const publishing: PublishedEvent[] = [];
    const done: bigint[] = [];
    let partly: { outboxId: bigint; chunks: { part: number; chunk: number }[] } | undefined;
    let drained = entries.length < ENTRIES_PER_TRANSACTION;
    let sequence = read.lastSequence;
    const add = (entry: OutboxRow, drafts: EventDraft[]) => {
      for (const draft of drafts) {
        publishing.push({ ...draft, sequence: ++sequence, id: newId("evt"), createdAt: entry.createdAt });
      }
    };
    for (const entry of entries) {
      if (namesMembers(entry)) {
        const members = taken.get(entry.id);
        if (!members) {
          drained = false;
          break;
        }
        const [entered, left] = members.parts;
        if (entry.type === "members.created") add(entry, createdEvents(idsOf(entered)));
        else {
          const { reason } = entry.data as { reason: ChangeReason };
          add(entry, membersChangedEvents(entry.audienceId as string, reason, idsOf(entered), idsOf(left)));
        }
        if (!members.finished) {
          partly = { outboxId: entry.id, chunks: members.chunks.map(({ part, chunk }) => ({ part, chunk })) };
          drained = false;
          break;
        }
      } else {
        add(entry, plainEvents({ type: entry.type, ...entry.data } as Parameters<typeof plainEvents>[0]));
      }
      done.push(entry.id);
    }
    // Everything read is published: end here (drained) rather than in a second transaction that
    // would find the outbox empty (entries recorded meanwhile come with a poke of their own).
    // Nobody reads the publishing's answer: it goes with the COMMIT, its failure the commit's.
    await events.publish(withCommit(tx), workspaceId, publishing, {
      done,
      drained,
      ...(partly ? { taken: partly } : {}),
    });
    // Whether to poke the deliverer is told by the read (an enabled webhook selects an entry's
    // type and audience), not by a count of the deliveries queued, which the COMMIT's pipeline
    // does not answer. A poke for nothing costs the deliverer one statement that finds nothing
    // due; a delivery for a webhook created since the read waits for its sweep (every second).
    return {
      more: !drained,
      tellDeliverer: read.webhooks && publishing.length > 0,
      published: publishing.map((event) => event.type),
    };
  }

  /** Publishes everything the workspace has pending. Returns whether it published anything. */
  async function publish(workspaceId: string): Promise<boolean> {
    let any = false;
    while (await publishSome(workspaceId)) any = true;
    return any;
  }

  return {
    publish,

    /** Publishes every workspace's pending entries (after a restart, or another process's crash). */
    async publishAll(): Promise<void> {
      for (;;) {
        const pending = await events.pendingWorkspaces(store.db, 100);
        let progressed = false;
        for (const workspaceId of pending) progressed = (await publish(workspaceId)) || progressed;
        // Workspaces whose head another process holds are left to it.
        if (pending.length < 100 || !progressed) return;
      }
    },
  };
}

export type EventRelay = ReturnType<typeof createEventRelay>;

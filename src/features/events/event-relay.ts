import { newId } from "../../domain/ids.ts";
import type { Store, Tx } from "../../platform/db/database.ts";
import { eventsPublished } from "../../platform/metrics.ts";
import { type ChangeReason, membersOf } from "../membership/member-set.ts";
import { createdEvents, type EventDraft, membersChangedEvents, plainEvents } from "../membership/outbox-entries.ts";
import type { EventRepo, OutboxRow, PublishedEvent } from "./event-repo.ts";

export interface EventRelayDeps {
  store: Pick<Store, "transaction" | "db">;
  events: Pick<
    EventRepo,
    | "pendingWorkspaces"
    | "lockHead"
    | "readEntries"
    | "readChunks"
    | "deleteChunks"
    | "idsOf"
    | "publish"
    | "dropTombstonesIfIdle"
  >;
  /** Told when deliveries were queued. */
  onDeliveries?: () => void;
}

/** What one relay transaction publishes at most: entries, and member set chunks (8,192 members each). */
const ENTRIES_PER_TRANSACTION = 200;
const CHUNKS_PER_TRANSACTION = 16;

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
 * done). The chunks of all the entries a transaction publishes are read in one statement, and
 * their members named in one more.
 */
export function createEventRelay(deps: EventRelayDeps) {
  const { store, events } = deps;

  /**
   * The member numbers of the entries' sets that fit in one transaction, in entry order: an entry
   * that does not fit whole takes what is left, and the entries after it wait.
   */
  async function takeMembers(tx: Tx, workspaceId: string, entries: OutboxRow[]): Promise<Map<bigint, Taken>> {
    const withMembers = entries.filter(namesMembers);
    const chunksOf = await events.readChunks(
      tx,
      workspaceId,
      withMembers.map((entry) => entry.id),
      CHUNKS_PER_TRANSACTION + 1,
    );
    const taken = new Map<bigint, Taken>();
    let budget = CHUNKS_PER_TRANSACTION;
    for (const entry of withMembers) {
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
    const { more, deliveries, published } = await store.transaction(async (tx) => {
      const head = await events.lockHead(tx, workspaceId);
      if (!head) return { more: false, deliveries: 0, published: [] };
      const entries = await events.readEntries(tx, workspaceId, ENTRIES_PER_TRANSACTION);
      if (entries.length === 0) {
        await events.dropTombstonesIfIdle(tx, workspaceId);
        return { more: false, deliveries: 0, published: [] };
      }
      const taken = await takeMembers(tx, workspaceId, entries);
      const numbers = new Set<number>();
      for (const { parts } of taken.values()) for (const part of parts) for (const seq of part) numbers.add(seq);
      const names = await events.idsOf(tx, workspaceId, [...numbers]);
      // A number without a name cannot happen (tombstones outlive every entry naming them); skip it.
      const idsOf = (seqs: number[] = []) => seqs.flatMap((seq) => names.get(seq) ?? []);

      const publishing: PublishedEvent[] = [];
      const done: bigint[] = [];
      let drained = entries.length < ENTRIES_PER_TRANSACTION;
      let sequence = head.lastSequence;
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
            await events.deleteChunks(tx, workspaceId, entry.id, members.chunks);
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
      const queued = await events.publish(tx, workspaceId, publishing, { done, drained });
      return { more: !drained, deliveries: queued, published: publishing.map((event) => event.type) };
    });
    for (const type of published) eventsPublished.inc({ type });
    // Only once committed can another connection (the deliverer's) see the deliveries.
    if (deliveries > 0) deps.onDeliveries?.();
    return more;
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

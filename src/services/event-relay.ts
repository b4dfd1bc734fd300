import { createdEvents, type EventDraft, membersChangedEvents, plainEvents } from "../domain/events.ts";
import { newId } from "../domain/ids.ts";
import { type ChangeReason, membersOf } from "../domain/member-set.ts";
import { eventsPublished } from "../metrics.ts";
import type { Store, Tx } from "../store/database.ts";
import type { EventRepo, OutboxRow, PublishedEvent } from "../store/event-repo.ts";

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

/**
 * Publishes outbox entries as the workspace's event feed. One relay at a time per workspace (the
 * head's row lock; another process's relay skips a workspace being published), each transaction
 * giving its events the next sequences and committing them at once: a reader sees events in
 * sequence order with no gaps. Entries are published in the order they were recorded; a large
 * member set is published over several transactions, a few chunks at a time, so that the store
 * stays free for requests meanwhile, and its events stay consecutive (the entry is the oldest
 * until it is done).
 */
export function createEventRelay(deps: EventRelayDeps) {
  const { store, events } = deps;

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
        if (entry.type === "audience.members_changed" || entry.type === "members.created") {
          const finished = await publishMembers(tx, workspaceId, entry, (drafts) => add(entry, drafts));
          if (!finished) {
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

  /**
   * Names the members of an entry's sets (a few chunks at most) and publishes them. True when the
   * entry is done; false when chunks remain for the next transaction.
   */
  async function publishMembers(
    tx: Tx,
    workspaceId: string,
    entry: OutboxRow,
    emit: (drafts: EventDraft[]) => void,
  ): Promise<boolean> {
    const chunks = await events.readChunks(tx, workspaceId, entry.id, CHUNKS_PER_TRANSACTION + 1);
    const now = chunks.slice(0, CHUNKS_PER_TRANSACTION);
    const parts: number[][] = [[], []];
    for (const { part, chunk, bytes } of now) {
      for (const seq of membersOf(new Map([[chunk, bytes]]))) parts[part]?.push(seq);
    }
    const names = await events.idsOf(tx, workspaceId, [...(parts[0] ?? []), ...(parts[1] ?? [])]);
    // A number without a name cannot happen (tombstones outlive every entry naming them); skip it.
    const idsOf = (seqs: number[] = []) => seqs.flatMap((seq) => names.get(seq) ?? []);
    if (entry.type === "members.created") {
      emit(createdEvents(idsOf(parts[0])));
    } else {
      const { reason } = entry.data as { reason: ChangeReason };
      emit(membersChangedEvents(entry.audienceId as string, reason, idsOf(parts[0]), idsOf(parts[1])));
    }
    if (chunks.length <= CHUNKS_PER_TRANSACTION) return true;
    await events.deleteChunks(tx, workspaceId, entry.id, now);
    return false;
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

import type { components } from "../../../generated/api.d.ts";
import { decodeSequenceCursor, encodeSequenceCursor } from "../../domain/cursor.ts";
import { BadRequestError, cursorExpired } from "../../domain/errors.ts";
import type { Store } from "../../platform/db/database.ts";
import type { EventFeedRepo } from "./event-feed-repo.ts";

type Schemas = components["schemas"];

export interface EventFeedQuery {
  after?: string | undefined;
  before?: string | undefined;
  limit?: number | undefined;
  types?: Schemas["EventType"][] | undefined;
  audienceId?: string | undefined;
}

/** The workspace's event feed: pages after a cursor, and the head to follow from now on. */
export function createEventFeed({
  store,
  events,
}: {
  store: Pick<Store, "db" | "primaryDb" | "replicated">;
  events: Pick<EventFeedRepo, "page" | "head">;
}) {
  // A cursor names its workspace, so another workspace's feed refuses it.
  const scope = (workspaceId: string) => `events:${workspaceId}`;

  /**
   * The events up to `before`'s position, newest first; endCursor is the position just older than
   * the last one returned, to continue from (as before). A position older than what is kept has
   * nothing before it: an empty last page, not an expired cursor.
   */
  async function newestFirst(workspaceId: string, query: EventFeedQuery): Promise<Schemas["EventPage"]> {
    if (query.after !== undefined) {
      throw new BadRequestError("invalid_request", "after and before cannot go together: one direction at a time.", [
        { pointer: "/query/before", message: "is not allowed with after" },
      ]);
    }
    const before = decodeSequenceCursor(scope(workspaceId), query.before as string, "before");
    const limit = query.limit ?? 100;
    const types = query.types ? [...new Set(query.types)] : undefined;
    const pageQuery = { after: 0, before, limit, types, audienceId: query.audienceId };
    let page = await events.page(store.db, workspaceId, pageQuery);
    if (before > page.lastSequence && store.replicated)
      page = await events.page(store.primaryDb, workspaceId, pageQuery);
    if (before > page.lastSequence) {
      throw new BadRequestError("invalid_cursor", "before is not a cursor issued by this feed.", [
        { pointer: "/query/before", message: "is past the newest event" },
      ]);
    }
    const results = page.events.slice(0, limit);
    const hasNextPage = page.events.length > limit;
    const oldest = results.at(-1)?.sequence;
    const end = oldest === undefined ? before : oldest - 1;
    return {
      results: results as unknown as Schemas["Event"][],
      pageInfo: { hasNextPage, endCursor: encodeSequenceCursor(scope(workspaceId), end) },
    };
  }

  return {
    async list(workspaceId: string, query: EventFeedQuery): Promise<Schemas["EventPage"]> {
      if (query.before !== undefined) return newestFirst(workspaceId, query);
      const cursor =
        query.after === undefined ? undefined : decodeSequenceCursor(scope(workspaceId), query.after, "after");
      const limit = query.limit ?? 100;
      const types = query.types ? [...new Set(query.types)] : undefined;
      const pageQuery = { after: cursor ?? 0, limit, types, audienceId: query.audienceId };
      let page = await events.page(store.db, workspaceId, pageQuery);
      // A replica behind the cursor (the follower read the primary, or another replica, last):
      // the primary has what the cursor points to.
      if (cursor !== undefined && cursor > page.lastSequence && store.replicated) {
        page = await events.page(store.primaryDb, workspaceId, pageQuery);
      }
      if (cursor !== undefined && cursor > page.lastSequence) {
        throw new BadRequestError("invalid_cursor", "after is not a cursor issued by this feed.", [
          { pointer: "/query/after", message: "is past the newest event" },
        ]);
      }
      if (cursor !== undefined && cursor < page.firstRetained - 1) throw cursorExpired();
      const results = page.events.slice(0, limit);
      const hasNextPage = page.events.length > limit;
      // With nothing more to return, the feed was read to its head: continue from there, so a
      // filtered consumer does not scan the events it skipped again.
      const end = hasNextPage ? (results.at(-1)?.sequence as number) : Math.max(page.lastSequence, cursor ?? 0);
      return {
        results: results as unknown as Schemas["Event"][],
        pageInfo: { hasNextPage, endCursor: encodeSequenceCursor(scope(workspaceId), end) },
      };
    },

    async latest(workspaceId: string): Promise<Schemas["EventCursor"]> {
      return { cursor: encodeSequenceCursor(scope(workspaceId), await events.head(store.db, workspaceId)) };
    },
  };
}

export type EventFeed = ReturnType<typeof createEventFeed>;

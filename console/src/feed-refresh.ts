import type { Event } from "@audience-service/client";
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef } from "react";
import { useApi } from "./api.tsx";

/** How often the console looks for new events at the feed's head. */
const POLL_MS = 2_000;

export interface FeedHandlers {
  /** The feed's head was read: what happens from now on follows. */
  onFollowing?(): void;
  /** Events arrived, oldest first. */
  onEvents(events: Event[]): unknown;
  /** A look at the feed failed; the next one, after the interval, starts again from the head. */
  onError?(error: unknown): void;
}

/**
 * Follows the workspace's event feed from its head (events/latest) while the component is on
 * screen, looking for more every `pollMs`; a failed look is retried after the interval. With
 * `history`, first the newest `history` events up to the head (one newest-first page, `before`
 * the head's cursor), then onward.
 */
export function useFeedFromNow(pollMs: number, handlers: FeedHandlers, history = 0): void {
  const { client, workspaceId } = useApi();
  // The latest handlers, without following the feed again each time the component renders.
  const current = useRef(handlers);
  current.current = handlers;
  useEffect(() => {
    const stop = new AbortController();
    // The history is read once; after a failure the feed is taken up again from its head.
    let readHistory = false;
    const head = async () =>
      (await client.GET("/v0/workspaces/{workspaceId}/events/latest", { params: { path: { workspaceId } } })).cursor;
    const readRecent = async (): Promise<string> => {
      readHistory = true;
      const cursor = await head();
      const { results } = await client.GET("/v0/workspaces/{workspaceId}/events", {
        params: { path: { workspaceId }, query: { before: cursor, limit: history } },
      });
      await current.current.onEvents([...results].reverse());
      return cursor;
    };
    const follow = async () => {
      while (!stop.signal.aborted) {
        try {
          const cursor = history > 0 && !readHistory ? await readRecent() : await head();
          current.current.onFollowing?.();
          const pages = client.feed({ workspaceId, after: cursor, pollIntervalMs: pollMs, signal: stop.signal });
          for await (const page of pages) await current.current.onEvents(page.events);
        } catch (error) {
          if (!stop.signal.aborted) current.current.onError?.(error);
          await new Promise((resolve) => setTimeout(resolve, pollMs));
        }
      }
    };
    void follow();
    return () => stop.abort();
  }, [client, workspaceId, pollMs, history]);
}

/**
 * Keeps every screen current without a reload: whenever events arrive (made by this console,
 * another client, a rule or the clock), the queries on screen are read again.
 */
export function useFeedRefresh(): void {
  const queryClient = useQueryClient();
  useFeedFromNow(POLL_MS, { onEvents: () => queryClient.invalidateQueries() });
}

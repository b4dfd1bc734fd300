import { useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { useApi } from "./api.tsx";

/** How often the console looks for new events at the feed's head. */
const POLL_MS = 2_000;

/**
 * Keeps every screen current without a reload: follows the workspace's event feed from its head
 * and, whenever events arrive (made by this console, another client, a rule or the clock),
 * refetches the queries on screen. A failed poll is retried at the next interval.
 */
export function useFeedRefresh(): void {
  const { client, workspaceId } = useApi();
  const queryClient = useQueryClient();
  useEffect(() => {
    const stop = new AbortController();
    const follow = async () => {
      while (!stop.signal.aborted) {
        try {
          const { cursor } = await client.GET("/v0/workspaces/{workspaceId}/events/latest", {
            params: { path: { workspaceId } },
          });
          for await (const _page of client.feed({
            workspaceId,
            after: cursor,
            pollIntervalMs: POLL_MS,
            signal: stop.signal,
          })) {
            await queryClient.invalidateQueries();
          }
        } catch {
          await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        }
      }
    };
    void follow();
    return () => stop.abort();
  }, [client, workspaceId, queryClient]);
}

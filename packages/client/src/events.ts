import type { components } from "../generated/api.js";

/** One change, as the feed lists it and a webhook delivers it: a union narrowed by `type`. */
export type Event = components["schemas"]["Event"];
export type EventType = Event["type"];
/** The event of one type: `EventOf<"audience.members_changed">["data"]["entered"]`. */
export type EventOf<T extends EventType> = Extract<Event, { type: T }>;
/** What a webhook receives: any event, or the test event sent by testWebhook. */
export type WebhookEvent = Event | components["schemas"]["WebhookTestEvent"];

export interface FeedOptions {
  workspaceId: string;
  /** Continue after this cursor (events/latest's, or a page's `cursor`); from the oldest kept event when absent. */
  after?: string | undefined;
  /** Only events of these types. */
  types?: EventType[] | undefined;
  /** Only events about this audience. */
  audienceId?: string | undefined;
  /** Events per request, 1 to 1,000 (100 by default). */
  limit?: number | undefined;
  /** At the head, wait `pollIntervalMs` and look again (true, the default), or stop (false). */
  follow?: boolean | undefined;
  pollIntervalMs?: number | undefined;
  /** Stops following; a wait in progress ends at once. */
  signal?: AbortSignal | undefined;
}

/** A page of the feed, and the cursor to continue from once its events are handled. */
export interface FeedPage {
  events: Event[];
  cursor: string;
}

type EventPage = components["schemas"]["EventPage"];
type GetPage = (query: Record<string, unknown>) => Promise<EventPage>;

/**
 * Pages of the feed from a cursor, in sequence order, never skipping or repeating an event. Store
 * each page's `cursor` after handling its events to resume there later (a restart, a crash).
 */
export async function* followFeed(getPage: GetPage, options: FeedOptions): AsyncGenerator<FeedPage, void, undefined> {
  const { follow = true, pollIntervalMs = 1_000, signal } = options;
  let cursor = options.after;
  while (!signal?.aborted) {
    const page = await getPage({
      ...(cursor === undefined ? {} : { after: cursor }),
      ...(options.types ? { types: options.types } : {}),
      ...(options.audienceId ? { audienceId: options.audienceId } : {}),
      ...(options.limit ? { limit: options.limit } : {}),
    });
    cursor = page.pageInfo.endCursor;
    if (page.results.length > 0) yield { events: page.results, cursor };
    if (page.pageInfo.hasNextPage) continue;
    if (!follow) return;
    await pause(pollIntervalMs, signal);
  }
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

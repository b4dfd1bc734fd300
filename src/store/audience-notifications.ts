import pg from "pg";

/** What the audience_changed notifications (migration 20261122000000) are delivered to. */
export interface AudienceChangeListener {
  /** An audience of the workspace was renamed or deleted, by any process. */
  changed(workspaceId: string, audienceId: string): void;
  /** Whether notifications are being received (false while the connection is down). */
  live(isLive: boolean): void;
}

export const AUDIENCE_CHANNEL = "audience_changed";

/**
 * Listens for audience changes on a connection of its own (LISTEN cannot share a pooled one),
 * reconnecting with backoff when it drops. Returns a function that stops listening.
 */
export function listenForAudienceChanges(
  connectionString: string,
  listener: AudienceChangeListener,
  { retryMs = 1_000, maxRetryMs = 30_000 } = {},
): () => Promise<void> {
  let stopped = false;
  let client: pg.Client | undefined;
  let timer: NodeJS.Timeout | undefined;
  let delay = retryMs;

  const dropped = (from: pg.Client) => {
    if (client !== from) return;
    client = undefined;
    listener.live(false);
    from.end().catch(() => {});
    if (stopped) return;
    timer = setTimeout(connect, delay);
    timer.unref();
    delay = Math.min(delay * 2, maxRetryMs);
  };

  async function connect(): Promise<void> {
    const next = new pg.Client({ connectionString, keepAlive: true });
    client = next;
    next.on("error", () => dropped(next));
    next.on("end", () => dropped(next));
    next.on("notification", (message) => {
      if (message.channel !== AUDIENCE_CHANNEL || !message.payload) return;
      const [workspaceId, audienceId] = message.payload.split(" ");
      if (workspaceId && audienceId) listener.changed(workspaceId, audienceId);
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${AUDIENCE_CHANNEL}`);
    } catch {
      dropped(next);
      return;
    }
    if (client !== next || stopped) return;
    delay = retryMs;
    listener.live(true);
  }

  void connect();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    const last = client;
    client = undefined;
    listener.live(false);
    await last?.end().catch(() => {});
  };
}

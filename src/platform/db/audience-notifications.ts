import { randomUUID } from "node:crypto";
import pg from "pg";

/** What the audience_changed notifications (migration 20261122000000) are delivered to. */
export interface AudienceChangeListener {
  /** An audience of the workspace was renamed or deleted, by any process. */
  changed(workspaceId: string, audienceId: string): void;
  /** Whether notifications are being received (false while the connection is down). */
  live(isLive: boolean): void;
  /** Told when notifications stop or start arriving, with why: for the log. */
  report?(level: "warn" | "info", message: string): void;
}

export const AUDIENCE_CHANNEL = "audience_changed";
const PROBE_PREFIX = "probe ";

export interface ListenOptions {
  /** Sends a notification the way the other processes do (through the pool): the probe. */
  notify(payload: string): Promise<void>;
  retryMs?: number;
  maxRetryMs?: number;
  /** How long a probe may take to come back. */
  probeTimeoutMs?: number;
  /** How often a live connection is probed again. */
  heartbeatMs?: number;
}

/**
 * Listens for audience changes on a connection of its own (LISTEN cannot share a pooled one),
 * reconnecting with backoff when it drops. Returns a function that stops listening.
 *
 * The connection counts as live only once a probe, sent through the pool as every other process
 * sends its notifications, has come back on it; and it is probed again every heartbeatMs. So a
 * LISTEN that cannot hear the others (through PgBouncer in transaction mode, which hands the
 * listening server connection to other clients; a half-open connection to a frozen server) is
 * reported and leaves the cache off, instead of silently serving stale names.
 */
export function listenForAudienceChanges(
  connectionString: string,
  listener: AudienceChangeListener,
  { notify, retryMs = 500, maxRetryMs = 5_000, probeTimeoutMs = 2_000, heartbeatMs = 10_000 }: ListenOptions,
): () => Promise<void> {
  let stopped = false;
  let client: pg.Client | undefined;
  let timer: NodeJS.Timeout | undefined;
  let delay = retryMs;
  // undefined until the first connection attempt ends either way, so that a first failure is reported too.
  let isLive: boolean | undefined;
  const probes = new Map<string, () => void>();

  const setLive = (live: boolean, why: string) => {
    if (live === isLive) return;
    isLive = live;
    listener.live(live);
    if (!stopped) listener.report?.(live ? "info" : "warn", why);
  };

  const schedule = (fn: () => void, ms: number) => {
    clearTimeout(timer);
    timer = setTimeout(fn, ms);
    timer.unref();
  };

  const dropped = (from: pg.Client, why: string) => {
    if (client !== from) return;
    client = undefined;
    setLive(false, `${why}; audiences are not cached until notifications arrive again`);
    from.end().catch(() => {});
    if (stopped) return;
    schedule(connect, delay);
    delay = Math.min(delay * 2, maxRetryMs);
  };

  /** Sends a probe through the pool; true when it came back on this connection in time. */
  async function probe(): Promise<boolean> {
    const nonce = randomUUID();
    const arrived = new Promise<boolean>((resolve) => {
      probes.set(nonce, () => resolve(true));
      setTimeout(() => resolve(false), probeTimeoutMs).unref();
    });
    try {
      await notify(PROBE_PREFIX + nonce);
      return await arrived;
    } catch {
      return false;
    } finally {
      probes.delete(nonce);
    }
  }

  async function heartbeat(from: pg.Client): Promise<void> {
    if (client !== from || stopped) return;
    if (!(await probe())) {
      dropped(
        from,
        "audience change notifications stopped arriving (a probe sent through DATABASE_URL did not come back on the LISTEN connection)",
      );
      return;
    }
    schedule(() => void heartbeat(from), heartbeatMs);
  }

  async function connect(): Promise<void> {
    const next = new pg.Client({ connectionString, keepAlive: true, connectionTimeoutMillis: probeTimeoutMs });
    client = next;
    next.on("error", (error) => dropped(next, `the LISTEN connection failed: ${error.message}`));
    next.on("end", () => dropped(next, "the LISTEN connection closed"));
    next.on("notification", (message) => {
      if (message.channel !== AUDIENCE_CHANNEL || !message.payload) return;
      if (message.payload.startsWith(PROBE_PREFIX)) {
        probes.get(message.payload.slice(PROBE_PREFIX.length))?.();
        return;
      }
      const [workspaceId, audienceId] = message.payload.split(" ");
      if (workspaceId && audienceId) listener.changed(workspaceId, audienceId);
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${AUDIENCE_CHANNEL}`);
    } catch (error) {
      dropped(next, `cannot LISTEN for audience changes: ${(error as Error).message}`);
      return;
    }
    if (client !== next || stopped) return;
    if (!(await probe())) {
      dropped(
        next,
        "audience change notifications sent through DATABASE_URL do not reach the LISTEN connection " +
          "(behind PgBouncer in transaction mode, set DATABASE_LISTEN_URL to a direct connection)",
      );
      return;
    }
    if (client !== next || stopped) return;
    delay = retryMs;
    setLive(true, "receiving audience change notifications");
    schedule(() => void heartbeat(next), heartbeatMs);
  }

  void connect();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    const last = client;
    client = undefined;
    if (isLive) listener.live(false);
    isLive = undefined;
    await last?.end().catch(() => {});
  };
}

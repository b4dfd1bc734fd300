import type { Readable } from "node:stream";
import { serviceUnavailable, TooManyExportsError } from "../../domain/errors.ts";

/** Seconds a refused export is told to wait: about what a large export takes. */
const RETRY_AFTER_SECONDS = 5;

export interface PlaceOptions {
  /** Exports streamed at once, and of those, exports of one API key. */
  concurrency: number;
  perKey: number;
  /** How long a client may take nothing of its file before it is disconnected. */
  writeTimeoutMs: number;
  /** How long a client may take nothing before its place goes to an export that would be refused. */
  stalledAfterMs: number;
  now?: () => number;
}

/**
 * An export's place, from before its first read until its file closes. The file tells it when it
 * waits for its client to take more (`waiting`) and when the client took some (`taken`): that
 * wait, and nothing the server does meanwhile (reading the database), is what the write timeout
 * and a stalled reader's eviction measure.
 */
export interface Place {
  waiting(): void;
  taken(): void;
  /** The file the place is for: it is cut when its client stalls, and gives the place back when closed. */
  hold(file: Readable): void;
  /** Gives the place back (once): the file failed to open. */
  release(): void;
}

interface Holder {
  key: string;
  waitingSince: number | undefined;
  /** Gives the place back at once and cuts the file; undefined until the file exists. */
  drop: ((reason: Error) => void) | undefined;
}

/**
 * Places for exports: `concurrency` in all, `perKey` of them for one API key. When none is free,
 * the export whose client has taken nothing for longest, if that is stalledAfterMs or more, is
 * cut and its place given to the new one: stalled readers hold places only while nobody else
 * needs them (the socket buffers of a stalled client hold what the server sent, so it cannot
 * tell a stalled client from a slow one any sooner). Otherwise the request is refused at once,
 * before anything is read or sent: waiting would hold its socket, and a file that starts cannot
 * be refused any more (a 200 cut short later is worse than a 429 now).
 *
 * A client that takes nothing for writeTimeoutMs is cut whatever the others do. The export
 * measures this itself rather than through the socket's idle timer: Node re-arms that timer once
 * when the write in progress was partly taken before the client stalled, so a stalled client
 * kept its place for up to twice the write timeout.
 */
export function exportPlaces({ concurrency, perKey, writeTimeoutMs, stalledAfterMs, now = Date.now }: PlaceOptions) {
  const held = new Set<Holder>();
  const stalledAfter = Math.min(stalledAfterMs, writeTimeoutMs);
  const idleOf = (holder: Holder, at: number) => (holder.waitingSince === undefined ? 0 : at - holder.waitingSince);

  /** The holder among `holders` whose client has taken nothing for longest, if for stalledAfter or more. */
  function mostStalled(holders: Iterable<Holder>): Holder | undefined {
    const at = now();
    let found: Holder | undefined;
    for (const holder of holders) {
      const idle = idleOf(holder, at);
      if (holder.drop && idle >= stalledAfter && (!found || idle > idleOf(found, at))) found = holder;
    }
    return found;
  }

  function evict(holder: Holder | undefined): boolean {
    if (!holder?.drop) return false;
    holder.drop(
      new Error(`The export's client took nothing for ${stalledAfter} ms and another export needed its place.`),
    );
    return true;
  }

  return {
    /** A place for the key, or the refusal (TooManyExportsError, or a 503). */
    take(key: string): Place {
      const ofKey = [...held].filter((holder) => holder.key === key);
      if (ofKey.length >= perKey && !evict(mostStalled(ofKey))) {
        throw new TooManyExportsError(
          `This API key already runs ${ofKey.length} export(s) on this server, as many as one key may at once; retry in ${RETRY_AFTER_SECONDS} seconds.`,
          RETRY_AFTER_SECONDS,
        );
      }
      if (held.size >= concurrency && !evict(mostStalled(held))) {
        throw serviceUnavailable(
          `This server already streams ${held.size} exports, as many as it runs at once; retry in ${RETRY_AFTER_SECONDS} seconds.`,
          RETRY_AFTER_SECONDS,
        );
      }
      const holder: Holder = { key, waitingSince: undefined, drop: undefined };
      held.add(holder);
      let timer: NodeJS.Timeout | undefined;
      const release = () => {
        held.delete(holder);
        clearTimeout(timer);
      };
      return {
        waiting() {
          holder.waitingSince ??= now();
        },
        taken() {
          holder.waitingSince = undefined;
        },
        release,
        hold(file) {
          holder.drop = (reason) => {
            release();
            file.destroy(reason);
          };
          file.once("close", release);
          // Checked when the client could first have been idle that long, then again for the rest.
          const check = () => {
            const idle = idleOf(holder, now());
            if (idle < writeTimeoutMs) {
              timer = setTimeout(check, writeTimeoutMs - idle).unref();
              return;
            }
            holder.drop?.(new Error(`The export's client took nothing for ${writeTimeoutMs} ms: disconnected.`));
          };
          timer = setTimeout(check, writeTimeoutMs).unref();
        },
      };
    },
  };
}

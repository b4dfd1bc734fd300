import type { SqlQueryable } from "@prisma/driver-adapter-utils";
import { StoreBusyError } from "./pg-errors.ts";

export interface GateOptions {
  /** Callers admitted at once (the connections they will use). */
  concurrency: number;
  /** Callers that may wait for a place; one more is refused at once. */
  queueLimit: number;
  /**
   * How long a caller may wait for a place before it is refused; undefined: as long as it takes,
   * for callers whose wait is bounded otherwise (by their number and each one's own timeout).
   */
  maxWaitMs?: number | undefined;
}

export interface Gate {
  run<T>(fn: () => Promise<T>): Promise<T>;
  readonly active: number;
  readonly waiting: number;
}

/**
 * A bounded queue in front of the database: at most `concurrency` callers run, at most
 * `queueLimit` wait, none waits longer than `maxWaitMs`. Whoever is refused gets StoreBusyError
 * (a 503 with Retry-After) at once instead of holding its request, its body and a socket for as
 * long as the database is saturated.
 */
export function createGate({ concurrency, queueLimit, maxWaitMs }: GateOptions): Gate {
  let active = 0;
  const queue: Array<{ admit: () => void; timer: NodeJS.Timeout | undefined }> = [];

  const release = () => {
    const next = queue.shift();
    if (next) {
      clearTimeout(next.timer);
      next.admit(); // the place passes straight to the next caller
    } else {
      active--;
    }
  };

  const admission = (): Promise<void> => {
    if (active < concurrency) {
      active++;
      return Promise.resolve();
    }
    if (queue.length >= queueLimit) {
      return Promise.reject(new StoreBusyError(`${queue.length} requests are already waiting for the database`));
    }
    return new Promise((resolve, reject) => {
      const entry = {
        admit: resolve,
        timer:
          maxWaitMs === undefined
            ? undefined
            : setTimeout(() => {
                queue.splice(queue.indexOf(entry), 1);
                reject(new StoreBusyError(`no database connection became free within ${maxWaitMs} ms`));
              }, maxWaitMs),
      };
      queue.push(entry);
    });
  };

  return {
    async run(fn) {
      await admission();
      try {
        return await fn();
      } finally {
        release();
      }
    },
    get active() {
      return active;
    },
    get waiting() {
      return queue.length;
    },
  };
}

/** The statements of `queryable`, each run when the gate admits it. */
export function takingTurns(gate: Gate, queryable: SqlQueryable): SqlQueryable {
  return {
    provider: queryable.provider,
    adapterName: queryable.adapterName,
    queryRaw: (query) => gate.run(() => queryable.queryRaw(query)),
    executeRaw: (query) => gate.run(() => queryable.executeRaw(query)),
  };
}

/**
 * Background work that runs when poked and every `intervalMs` as well, one run at a time: a poke
 * during a run makes it run once more afterwards, so nothing poked is left waiting for the next
 * interval. Errors go to onError and the next poke or interval tries again.
 */
export function createWorkLoop(options: {
  run: (reason: "poked" | "interval") => Promise<void>;
  intervalMs: number;
  onError: (error: unknown) => void;
}) {
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> | undefined;
  let again: "poked" | "interval" | undefined;
  let stopped = true;

  const go = async (reason: "poked" | "interval") => {
    let next: "poked" | "interval" | undefined = reason;
    while (next && !stopped) {
      again = undefined;
      try {
        await options.run(next);
      } catch (error) {
        options.onError(error);
      }
      next = again;
    }
    current = undefined;
  };

  const poke = (reason: "poked" | "interval" = "poked") => {
    if (stopped) return;
    if (current) {
      // An interval run covers a poke; a poke does not cover an interval run.
      again = again === "interval" || reason === "interval" ? "interval" : "poked";
      return;
    }
    current = go(reason);
  };

  return {
    poke: () => poke("poked"),
    start(): void {
      if (!stopped) return;
      stopped = false;
      timer = setInterval(() => poke("interval"), options.intervalMs);
      timer.unref();
      poke("interval");
    },
    /** Stops the interval and waits for the run under way. */
    async stop(): Promise<void> {
      stopped = true;
      clearInterval(timer);
      await current;
    },
  };
}

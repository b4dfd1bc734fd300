import { test as base } from "../support/fixture.ts";
import { startLiveServer } from "../support/live-server.ts";

/**
 * Host names the webhook tests resolve themselves: a public name, and names that resolve to a
 * private, a link-local and a loopback address (DNS is not reachable from the test machine).
 */
export const HOSTS: Record<string, string[]> = {
  "hooks.example.com": ["93.184.215.14"],
  "internal.example.com": ["10.20.30.40"],
  "metadata.example.com": ["169.254.169.254"],
  "sneaky.example.com": ["93.184.215.14", "127.0.0.1"],
  "compat.example.com": ["::7f00:1"],
};

/** Retry attempts 0.1 s, 0.2 s, 0.3 s after the first: the Standard Webhooks schedule, sped up. */
export const FAST_ATTEMPTS_MS = [0, 100, 200, 300];

/**
 * The API fixture with a server that delivers webhooks to receivers on this machine
 * (WEBHOOK_ALLOW_PRIVATE), retries on a fast schedule, gives receivers 1 s to answer, and
 * resolves host names from HOSTS (then from the system).
 */
// biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
export const it = base.extend("server", { scope: "file" }, async ({}, { onCleanup }) => {
  const server = await startLiveServer({
    settings: {
      webhooks: {
        allowPrivate: true,
        timeoutMs: 1_000,
        attemptOffsetsMs: FAST_ATTEMPTS_MS,
        resolve: async (host) => HOSTS[host] ?? ["127.0.0.1"],
      },
    },
  });
  onCleanup(() => server.close());
  return server;
});

/**
 * The fast schedule's first retry (0.1 s), then a 10-minute step: a receiver that comes back
 * after its deliveries reached that step gets them within a test's time only by catching up.
 */
export const CATCH_UP_ATTEMPTS_MS = [0, 100, 600_000, 1_200_000];

/** The API fixture of `it`, on the CATCH_UP_ATTEMPTS_MS schedule. */
// biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
export const catchUpIt = base.extend("server", { scope: "file" }, async ({}, { onCleanup }) => {
  const server = await startLiveServer({
    settings: {
      webhooks: {
        allowPrivate: true,
        timeoutMs: 1_000,
        attemptOffsetsMs: CATCH_UP_ATTEMPTS_MS,
        resolve: async (host) => HOSTS[host] ?? ["127.0.0.1"],
      },
    },
  });
  onCleanup(() => server.close());
  return server;
});

/** The same, refusing private addresses as a default server does. */
// biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
export const strictIt = base.extend("server", { scope: "file" }, async ({}, { onCleanup }) => {
  const server = await startLiveServer({
    settings: { webhooks: { allowPrivate: false, resolve: async (host) => HOSTS[host] ?? ["127.0.0.1"] } },
  });
  onCleanup(() => server.close());
  return server;
});

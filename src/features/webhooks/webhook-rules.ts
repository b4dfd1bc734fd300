import ipaddr from "ipaddr.js";

/**
 * Whether a webhook may be delivered to this IP address: only ordinary public unicast addresses.
 * Loopback, private, link-local (169.254.0.0/16: cloud metadata), unique-local, carrier-grade
 * NAT, multicast, reserved and unspecified addresses are refused, as are IPv6 forms that embed an
 * IPv4 address (mapped, 6to4, Teredo, NAT64), which are judged by that address or refused.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  // ::ffff:127.0.0.1 is 127.0.0.1.
  return ipaddr.process(address).range() === "unicast";
}

/**
 * When delivery attempts are made, as offsets from the first one (the Standard Webhooks
 * schedule): at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h later; when
 * the last one fails too, the delivery has failed.
 */
export const ATTEMPT_OFFSETS_MS = [0, 5e3, 3e5, 18e5, 72e5, 18e6, 36e6, 504e5, 72e6, 864e5] as const;

/**
 * How long to wait after the `attemptsMade`-th attempt failed before the next one, ±10% so that
 * receivers that failed together are not all retried at once; undefined after the last attempt.
 */
export function retryDelay(
  attemptsMade: number,
  offsets: readonly number[] = ATTEMPT_OFFSETS_MS,
  random: () => number = Math.random,
): number | undefined {
  const next = offsets[attemptsMade];
  const previous = offsets[attemptsMade - 1];
  if (next === undefined || previous === undefined) return undefined;
  return (next - previous) * (1 + 0.1 * (2 * random() - 1));
}

/** A webhook is disabled after failing without a single success for this long. */
export const DISABLE_AFTER_FAILING_MS = 24 * 3_600_000;

/** What an answer (or its absence) means for a delivery. */
export function outcomeOf(statusCode: number | undefined): "succeeded" | "gone" | "failed" {
  if (statusCode === undefined) return "failed";
  if (statusCode >= 200 && statusCode < 300) return "succeeded";
  return statusCode === 410 ? "gone" : "failed";
}

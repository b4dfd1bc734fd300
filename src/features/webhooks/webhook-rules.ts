import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/** IPv6 global unicast (RFC 4291, IANA): every public IPv6 address is in it. */
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR("2000::/3");
/** NAT64's well-known prefix (RFC 6052): a DNS64 resolver writes IPv4-only hosts' addresses in it. */
const NAT64 = ipaddr.IPv6.parseCIDR("64:ff9b::/96");
/** The IPv6 documentation prefix of RFC 9637, newer than ipaddr.js's table of ranges. */
const DOCUMENTATION = ipaddr.IPv6.parseCIDR("3fff::/20");

/**
 * Whether a webhook may be delivered to this IP address: only ordinary public unicast addresses.
 * Loopback, private, link-local (169.254.0.0/16: cloud metadata), unique-local, carrier-grade
 * NAT, multicast, reserved and unspecified addresses are refused.
 *
 * IPv6 is allowed, not denied, by range: an address must be global unicast (2000::/3) and none of
 * its special ranges. That refuses, whatever IPv4 address they embed, the IPv4-compatible
 * ::a.b.c.d, site-local fec0::/10, local-use NAT64 64:ff9b:1::/48, the translated ::ffff:0:a.b.c.d,
 * and the transition forms 6to4 (2002::/16) and Teredo (2001::/32, whose client address is
 * obfuscated): a relay or a tunnel on the server's network would carry them to that IPv4 address.
 * Two forms stand for an IPv4 address and are judged by it: IPv4-mapped ::ffff:a.b.c.d, and
 * NAT64's well-known 64:ff9b::a.b.c.d, which is all a DNS64 network gives an IPv4-only receiver.
 */
export function isPublicAddress(address: string): boolean {
  const ip = parseAddress(address);
  if (ip === undefined) return false;
  if (ip.kind() === "ipv4") return ip.range() === "unicast";
  const v6 = ip as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress() || v6.match(NAT64)) return embeddedIPv4(v6).range() === "unicast";
  return v6.match(GLOBAL_UNICAST) && v6.range() === "unicast" && !v6.match(DOCUMENTATION);
}

/**
 * An address as DNS answers and URL hosts write it (a dotted quad, or IPv6), read as the WHATWG
 * URL parser reads a host: ipaddr.js alone would take the IPv4-compatible ::a.b.c.d for the
 * IPv4-mapped ::ffff:a.b.c.d. A zone (fe80::1%eth0) names an interface, not an address.
 */
function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const [bare = ""] = address.split("%", 1);
  const family = isIP(bare);
  if (family === 0) return undefined;
  return ipaddr.parse(family === 4 ? bare : new URL(`http://[${bare}]/`).hostname.slice(1, -1));
}

/** The IPv4 address in an IPv6 address's last 32 bits. */
function embeddedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4 {
  const [high = 0, low = 0] = ip.parts.slice(-2);
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
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

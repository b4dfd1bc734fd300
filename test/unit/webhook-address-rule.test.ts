import { describe, expect, it } from "vitest";
import { isPublicAddress } from "../../src/features/webhooks/webhook-rules.ts";

// The addresses a webhook may be delivered to, at creation and at every connection: each form is
// an address a URL or a DNS answer can give.
const PUBLIC = [
  ["93.184.215.14", "a public IPv4 address"],
  ["8.8.8.8", "a public resolver"],
  ["1.1.1.1", "another"],
  ["100.63.255.255", "just below carrier-grade NAT"],
  ["100.128.0.1", "just above carrier-grade NAT"],
  ["172.15.255.255", "just below 172.16.0.0/12"],
  ["172.32.0.1", "just above 172.16.0.0/12"],
  ["192.167.255.255", "just below 192.168.0.0/16"],
  ["169.253.255.255", "just below link-local"],
  ["126.255.255.255", "just below loopback"],
  ["128.0.0.1", "just above loopback"],
  ["223.255.255.254", "just below multicast"],
  ["2606:4700:4700::1111", "a public IPv6 address"],
  ["2001:4860:4860::8888", "another"],
  ["2a00:1450:4001:80b::200e", "another"],
  ["2001:200::1", "just above the IETF's 2001::/23"],
  ["2003::1", "a provider's"],
  ["::ffff:93.184.215.14", "a public IPv4 address, IPv4-mapped"],
  ["::ffff:5db8:d70e", "the same in hex"],
  ["64:ff9b::93.184.215.14", "a public IPv4 address through NAT64's well-known prefix (DNS64)"],
  ["64:ff9b::808:808", "the same in hex"],
] as const;

const NOT_PUBLIC = [
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback's end"],
  ["10.0.0.1", "private"],
  ["10.255.255.255", "private's end"],
  ["172.16.0.1", "private"],
  ["172.31.255.255", "private"],
  ["192.168.1.1", "private"],
  ["169.254.169.254", "cloud metadata (link-local)"],
  ["169.254.0.1", "link-local"],
  ["100.64.0.1", "carrier-grade NAT"],
  ["100.127.255.255", "carrier-grade NAT's end"],
  ["0.0.0.0", "unspecified"],
  ["0.1.2.3", "this network"],
  ["255.255.255.255", "broadcast"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.250", "multicast"],
  ["240.0.0.1", "reserved"],
  ["192.0.2.1", "documentation"],
  ["198.51.100.1", "documentation"],
  ["203.0.113.1", "documentation"],
  ["198.18.0.1", "benchmarking"],
  ["192.0.0.170", "IETF protocol assignments (NAT64 discovery)"],
  ["192.88.99.1", "the 6to4 relay anycast"],
  ["::1", "IPv6 loopback"],
  ["::", "IPv6 unspecified"],
  ["fe80::1", "IPv6 link-local"],
  ["fe80::1%eth0", "IPv6 link-local with a zone"],
  ["fc00::1", "unique-local"],
  ["fd12:3456:789a::1", "unique-local"],
  ["ff02::1", "IPv6 multicast"],
  ["ff05::1:3", "IPv6 multicast"],
  ["fec0::1", "site-local"],
  ["feff::1", "site-local's end"],
  ["::ffff:127.0.0.1", "loopback, IPv4-mapped"],
  ["::ffff:7f00:1", "loopback, IPv4-mapped in hex"],
  ["::ffff:10.0.0.1", "private, IPv4-mapped"],
  ["::ffff:a9fe:a9fe", "cloud metadata, IPv4-mapped"],
  ["::ffff:0.0.0.0", "unspecified, IPv4-mapped"],
  ["::7f00:1", "loopback, IPv4-compatible in hex"],
  ["::127.0.0.1", "loopback, IPv4-compatible"],
  ["::a9fe:a9fe", "cloud metadata, IPv4-compatible"],
  ["::a00:1", "private, IPv4-compatible"],
  ["::8.8.8.8", "any IPv4-compatible address (deprecated by RFC 4291)"],
  ["::ffff:0:127.0.0.1", "loopback, IPv4-translated (RFC 6145)"],
  ["::ffff:0:808:808", "any IPv4-translated address"],
  ["64:ff9b::127.0.0.1", "loopback through NAT64"],
  ["64:ff9b::a00:1", "private through NAT64"],
  ["64:ff9b::a9fe:a9fe", "cloud metadata through NAT64"],
  ["64:ff9b::c0a8:101", "private through NAT64"],
  ["64:ff9b:1::a9fe:a9fe", "cloud metadata through local-use NAT64 (RFC 8215)"],
  ["64:ff9b:1::808:808", "any local-use NAT64 address"],
  ["2002:7f00:1::", "loopback, 6to4"],
  ["2002:a9fe:a9fe::1", "cloud metadata, 6to4"],
  ["2002:c0a8:101::1", "private, 6to4"],
  ["2002:5db8:d70e::1", "any 6to4 address (deprecated, relayed)"],
  ["2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo with the obfuscated client 127.0.0.1"],
  ["2001:0:a00:1::", "Teredo with the server 10.0.0.1"],
  ["2001:0:5db8:d70e:0:0:a2:f1f1", "any Teredo address"],
  ["2001:db8::1", "IPv6 documentation"],
  ["3fff::1", "IPv6 documentation (RFC 9637)"],
  ["2001:2::1", "IPv6 benchmarking"],
  ["2001:10::1", "deprecated ORCHID"],
  ["2001:1::1", "IETF protocol assignments"],
  ["2620:4f:8000::1", "AS112"],
  ["100::1", "discard-only"],
  ["5f00::1", "outside global unicast (SRv6)"],
  ["4000::1", "outside global unicast"],
  ["not-an-address", "not an address"],
  ["", "empty"],
] as const;

describe("the webhook address rule", () => {
  it("is checked on enough forms", () => expect(PUBLIC.length + NOT_PUBLIC.length).toBeGreaterThanOrEqual(60));

  it.each(PUBLIC)("accepts %s (%s)", (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it.each(NOT_PUBLIC)("refuses %s (%s)", (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });
});

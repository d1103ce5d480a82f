// Table-driven checks of the SSRF address policy: every refused range, both sides of each boundary.
import { isIP } from "node:net";
import { describe, expect, it } from "vitest";
import {
  ipVersion,
  isGlobalUnicast,
  parseIPv4,
  parseIPv6,
  specialPurposeRange,
  unbracket,
} from "../../src/origin/ip-address.js";

// [address, globally routable?, range name fragment when refused]
type Row = [string, boolean, string?];

const IPV4: readonly Row[] = [
  // 0.0.0.0/8
  ["0.0.0.0", false, "this network"],
  ["0.255.255.255", false, "this network"],
  ["1.0.0.0", true],
  // 10.0.0.0/8
  ["9.255.255.255", true],
  ["10.0.0.0", false, "private"],
  ["10.255.255.255", false, "private"],
  ["11.0.0.0", true],
  // 100.64.0.0/10
  ["100.63.255.255", true],
  ["100.64.0.0", false, "CGNAT"],
  ["100.127.255.255", false, "CGNAT"],
  ["100.128.0.0", true],
  // 127.0.0.0/8
  ["126.255.255.255", true],
  ["127.0.0.0", false, "loopback"],
  ["127.0.0.1", false, "loopback"],
  ["127.255.255.255", false, "loopback"],
  ["128.0.0.0", true],
  // 169.254.0.0/16
  ["169.253.255.255", true],
  ["169.254.0.0", false, "link-local"],
  ["169.254.169.254", false, "metadata"],
  ["169.254.255.255", false, "link-local"],
  ["169.255.0.0", true],
  // 172.16.0.0/12
  ["172.15.255.255", true],
  ["172.16.0.0", false, "private"],
  ["172.31.255.255", false, "private"],
  ["172.32.0.0", true],
  // 192.0.0.0/24
  ["191.255.255.255", true],
  ["192.0.0.0", false, "IETF"],
  ["192.0.0.255", false, "IETF"],
  ["192.0.1.0", true],
  // 192.0.2.0/24
  ["192.0.1.255", true],
  ["192.0.2.0", false, "TEST-NET-1"],
  ["192.0.2.255", false, "TEST-NET-1"],
  ["192.0.3.0", true],
  // 192.88.99.0/24
  ["192.88.98.255", true],
  ["192.88.99.0", false, "6to4 relay"],
  ["192.88.99.255", false, "6to4 relay"],
  ["192.88.100.0", true],
  // 192.168.0.0/16
  ["192.167.255.255", true],
  ["192.168.0.0", false, "private"],
  ["192.168.255.255", false, "private"],
  ["192.169.0.0", true],
  // 198.18.0.0/15
  ["198.17.255.255", true],
  ["198.18.0.0", false, "benchmarking"],
  ["198.19.255.255", false, "benchmarking"],
  ["198.20.0.0", true],
  // 198.51.100.0/24
  ["198.51.99.255", true],
  ["198.51.100.0", false, "TEST-NET-2"],
  ["198.51.100.255", false, "TEST-NET-2"],
  ["198.51.101.0", true],
  // 203.0.113.0/24
  ["203.0.112.255", true],
  ["203.0.113.0", false, "TEST-NET-3"],
  ["203.0.113.255", false, "TEST-NET-3"],
  ["203.0.114.0", true],
  // 224.0.0.0/4 multicast
  ["223.255.255.255", true],
  ["224.0.0.0", false, "multicast"],
  ["239.255.255.255", false, "multicast"],
  // 240.0.0.0/4 reserved, 255.255.255.255 broadcast
  ["240.0.0.0", false, "reserved"],
  ["255.255.255.254", false, "reserved"],
  ["255.255.255.255", false, "broadcast"],
  // Global examples
  ["8.8.8.8", true],
  ["1.1.1.1", true],
  ["9.9.9.9", true],
  ["93.184.215.14", true],
];

const IPV6: readonly Row[] = [
  // ::/128, ::1/128 and the deprecated IPv4-compatible ::/96
  ["::", false, "unspecified"],
  ["::1", false, "loopback"],
  ["0:0:0:0:0:0:0:1", false, "loopback"],
  ["::2", false, "IPv4-compatible"],
  ["::8.8.8.8", false, "IPv4-compatible"],
  // ::ffff:0:0/96 IPv4-mapped: classified by the embedded IPv4 address
  ["::ffff:127.0.0.1", false, "IPv4-mapped of loopback"],
  ["::ffff:7f00:1", false, "IPv4-mapped of loopback"],
  ["::ffff:10.0.0.1", false, "IPv4-mapped of private"],
  ["::ffff:169.254.169.254", false, "IPv4-mapped of link-local"],
  ["::ffff:0.0.0.0", false, "IPv4-mapped of this network"],
  ["::ffff:8.8.8.8", true],
  ["::fffe:808:808", false, "2000::/3"],
  ["::1:ffff:808:808", false, "2000::/3"],
  // 64:ff9b::/96 NAT64 well-known prefix: classified by the embedded IPv4 address
  ["64:ff9b::8.8.8.8", true],
  ["64:ff9b::808:808", true],
  ["64:ff9b::127.0.0.1", false, "NAT64 of loopback"],
  ["64:ff9b::a00:1", false, "NAT64 of private"],
  ["64:ff9b::1:808:808", false, "2000::/3"],
  ["64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", false, "2000::/3"],
  // 64:ff9b:1::/48 local-use NAT64: refused whatever it embeds
  ["64:ff9b:1::808:808", false, "local-use"],
  ["64:ff9b:1:ffff:ffff:ffff:ffff:ffff", false, "local-use"],
  // 100::/64 discard-only
  ["100::", false, "discard"],
  ["100::ffff:ffff:ffff:ffff", false, "discard"],
  ["100:0:0:1::", false, "2000::/3"],
  // 2001::/23 IETF protocol assignments, incl. Teredo 2001::/32
  ["2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true],
  ["2001::", false, "Teredo"],
  ["2001:0:4136:e378:8000:63bf:3fff:fdd2", false, "Teredo"],
  ["2001:1::1", false, "IETF"],
  ["2001:2::", false, "IETF"],
  ["2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", false, "IETF"],
  ["2001:200::", true],
  // 2001:db8::/32 documentation
  ["2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", true],
  ["2001:db8::", false, "documentation"],
  ["2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", false, "documentation"],
  ["2001:db9::", true],
  // 2002::/16 6to4: classified by the embedded IPv4 address
  ["2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true],
  ["2002:808:808::1", true],
  ["2002:7f00:1::", false, "6to4 of loopback"],
  ["2002:a00:1::1", false, "6to4 of private"],
  ["2002:c0a8:101::", false, "6to4 of private"],
  ["2002:a9fe:a9fe::", false, "6to4 of link-local"],
  ["2003::", true],
  // 3fff::/20 documentation (RFC 9637)
  ["3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true],
  ["3fff::", false, "documentation"],
  ["3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", false, "documentation"],
  ["3fff:1000::", true],
  // 2000::/3 is the only global unicast allocation
  ["1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false, "2000::/3"],
  ["2000::", true],
  ["4000::", false, "2000::/3"],
  ["5f00::1", false, "SRv6"],
  // fc00::/7 unique local (incl. AWS IMDS fd00:ec2::254)
  ["fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false, "2000::/3"],
  ["fc00::", false, "unique local"],
  ["fd00:ec2::254", false, "unique local"],
  ["fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false, "unique local"],
  ["fe00::", false, "2000::/3"],
  // fe80::/10 link-local
  ["fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false, "2000::/3"],
  ["fe80::", false, "link-local"],
  ["fe80::1", false, "link-local"],
  ["febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false, "link-local"],
  // fec0::/10 deprecated site-local
  ["fec0::", false, "site-local"],
  ["feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false, "site-local"],
  // ff00::/8 multicast
  ["ff00::", false, "multicast"],
  ["ff02::1", false, "multicast"],
  ["ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false, "multicast"],
  // Global examples
  ["2606:4700::1111", true],
  ["2606:4700:4700::1111", true],
  ["2001:4860:4860::8888", true],
  ["2A00:1450:4001::1", true],
];

// Not strict canonical addresses: refused (fails closed) rather than guessed at.
const UNPARSABLE = [
  "",
  "localhost",
  "example.com",
  "127.1",
  "0177.0.0.1",
  "0x7f.0.0.1",
  "2130706433",
  "1.2.3.4.5",
  "256.0.0.1",
  "8.8.8.8 ",
  "[::1]",
  "::1%lo",
  "fe80::1%eth0",
  "2606:4700::1111::1",
  "1:2:3:4:5:6:7:8:9",
  "1:2:3:4:5:6:7:8::",
  "12345::",
  ":1::",
  "::1:",
  "1.2.3.4::",
  "::ffff:127.0.0.01",
  "g::1",
];

describe("isGlobalUnicast: IPv4 (IANA IPv4 Special-Purpose Address Registry)", () => {
  it.each(IPV4)("%s → global %s", (address, global, range) => {
    expect(isGlobalUnicast(address)).toBe(global);
    const why = specialPurposeRange(address);
    if (global) expect(why).toBeNull();
    else expect(why).toContain(range);
  });
});

describe("isGlobalUnicast: IPv6 (IANA IPv6 Special-Purpose Address Registry)", () => {
  it.each(IPV6)("%s → global %s", (address, global, range) => {
    expect(isGlobalUnicast(address)).toBe(global);
    const why = specialPurposeRange(address);
    if (global) expect(why).toBeNull();
    else expect(why).toContain(range);
  });
});

describe("isGlobalUnicast: unparsable input fails closed", () => {
  it.each(UNPARSABLE)("%j → false", (text) => {
    expect(isGlobalUnicast(text)).toBe(false);
    expect(specialPurposeRange(text)).toBe("not an IP address");
    expect(ipVersion(text)).toBe(0);
  });
});

describe("parsers", () => {
  it("parses IPv4 to a 32-bit number", () => {
    expect(parseIPv4("0.0.0.0")).toBe(0);
    expect(parseIPv4("127.0.0.1")).toBe(0x7f000001);
    expect(parseIPv4("255.255.255.255")).toBe(0xffffffff);
    expect(parseIPv4("01.2.3.4")).toBeNull();
  });

  it("parses IPv6 text forms to 8 groups", () => {
    expect(parseIPv6("::")).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIPv6("1::")).toEqual([1, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIPv6("1::8")).toEqual([1, 0, 0, 0, 0, 0, 0, 8]);
    expect(parseIPv6("1:2:3:4:5:6:7::")).toEqual([1, 2, 3, 4, 5, 6, 7, 0]);
    expect(parseIPv6("::ffff:1.2.3.4")).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
    expect(parseIPv6("1:2:3:4:5:6:1.2.3.4")).toEqual([1, 2, 3, 4, 5, 6, 0x0102, 0x0304]);
    expect(parseIPv6("FFFF::aBcD")).toEqual([0xffff, 0, 0, 0, 0, 0, 0, 0xabcd]);
    expect(parseIPv6("1:2:3:4:5:6:7")).toBeNull();
  });

  it("agrees with node:net on which rows are addresses", () => {
    for (const [address] of [...IPV4, ...IPV6]) expect(ipVersion(address)).toBe(isIP(address));
    // node:net accepts zone ids; we refuse them, everything else must agree.
    for (const text of UNPARSABLE.filter((t) => !t.includes("%"))) expect(isIP(text)).toBe(0);
  });

  it("unbrackets URL IPv6 hosts only", () => {
    expect(unbracket("[::1]")).toBe("::1");
    expect(unbracket("127.0.0.1")).toBe("127.0.0.1");
  });
});

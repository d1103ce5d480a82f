// Kept over ipaddr.js: its range() names do not encode our SSRF policy (NAT64/6to4/2000::/3); docs/library-decisions.md.
/**
 * IP address parsing and classification for the SSRF policy: is an address globally routable?
 * Runtime-neutral (no `node:` imports) so every runtime adapter can share it.
 */

/**
 * Sources: IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890 and its updates),
 * IANA IPv4 Multicast Address Space (RFC 5771), IANA IPv6 Address Space (only 2000::/3 is
 * allocated as global unicast, RFC 4291 §2.4), plus deprecated ranges (site-local RFC 3879,
 * 6to4 relay anycast RFC 7526). We deliberately refuse some ranges the registry marks
 * "globally reachable" (e.g. all of 192.0.0.0/24 and 2001::/23): nothing we fetch lives there.
 *
 * Policy for addresses that embed an IPv4 address:
 * - IPv4-mapped ::ffff:a.b.c.d (RFC 4291 §2.5.5.2): a socket to it IS a socket to a.b.c.d, so it
 *   is classified as the embedded IPv4 address.
 * - NAT64 well-known prefix 64:ff9b::/96 (RFC 6052): the translator connects to the embedded IPv4
 *   address, so it is classified as that address (a NAT64 gateway could otherwise reach 10/8).
 * - 6to4 2002::/16 (RFC 3056): classified as the embedded IPv4 address.
 * - Local-use NAT64 64:ff9b:1::/48 (RFC 8215) and Teredo 2001::/32 (RFC 4380) are refused outright:
 *   their embedding is network-specific or obfuscated.
 */

interface Range {
  /** Network address as a bigint (32 bits for IPv4, 128 bits for IPv6). */
  network: bigint;
  prefix: number;
  name: string;
}

const v4 = (cidr: string, name: string): Range => {
  const [addr = "", len = ""] = cidr.split("/");
  const network = parseIPv4(addr);
  if (network === null) throw new Error(`bad range ${cidr}`);
  return { network: BigInt(network), prefix: Number(len), name };
};

const v6 = (cidr: string, name: string): Range => {
  const [addr = "", len = ""] = cidr.split("/");
  const groups = parseIPv6(addr);
  if (groups === null) throw new Error(`bad range ${cidr}`);
  return { network: groupsToBigInt(groups), prefix: Number(len), name };
};

/** IPv4 ranges that are not globally routable unicast. Most specific first is not required: any match refuses. */
const IPV4_SPECIAL: readonly Range[] = [
  v4("0.0.0.0/8", "this network (RFC 791)"),
  v4("10.0.0.0/8", "private-use (RFC 1918)"),
  v4("100.64.0.0/10", "shared address space / CGNAT (RFC 6598)"),
  v4("127.0.0.0/8", "loopback (RFC 1122)"),
  v4("169.254.0.0/16", "link-local, incl. cloud metadata (RFC 3927)"),
  v4("172.16.0.0/12", "private-use (RFC 1918)"),
  v4("192.0.0.0/24", "IETF protocol assignments (RFC 6890)"),
  v4("192.0.2.0/24", "documentation TEST-NET-1 (RFC 5737)"),
  v4("192.88.99.0/24", "deprecated 6to4 relay anycast (RFC 7526)"),
  v4("192.168.0.0/16", "private-use (RFC 1918)"),
  v4("198.18.0.0/15", "benchmarking (RFC 2544)"),
  v4("198.51.100.0/24", "documentation TEST-NET-2 (RFC 5737)"),
  v4("203.0.113.0/24", "documentation TEST-NET-3 (RFC 5737)"),
  v4("224.0.0.0/4", "multicast (RFC 5771)"),
  v4("255.255.255.255/32", "limited broadcast (RFC 919)"),
  v4("240.0.0.0/4", "reserved (RFC 1112)"),
];

/** IPv6 ranges refused outright (those embedding IPv4 are handled before this table). */
const IPV6_SPECIAL: readonly Range[] = [
  v6("::/128", "unspecified (RFC 4291)"),
  v6("::1/128", "loopback (RFC 4291)"),
  v6("::/96", "deprecated IPv4-compatible (RFC 4291)"),
  v6("64:ff9b:1::/48", "local-use IPv4/IPv6 translation (RFC 8215)"),
  v6("100::/64", "discard-only (RFC 6666)"),
  v6("2001::/32", "Teredo (RFC 4380)"),
  v6("2001::/23", "IETF protocol assignments (RFC 2928)"),
  v6("2001:db8::/32", "documentation (RFC 3849)"),
  v6("3fff::/20", "documentation (RFC 9637)"),
  v6("5f00::/16", "SRv6 SIDs (RFC 9602)"),
  v6("fc00::/7", "unique local, incl. AWS metadata fd00:ec2::254 (RFC 4193)"),
  v6("fe80::/10", "link-local (RFC 4291)"),
  v6("fec0::/10", "deprecated site-local (RFC 3879)"),
  v6("ff00::/8", "multicast (RFC 4291)"),
];

const GLOBAL_UNICAST_V6 = v6("2000::/3", "global unicast");

/** Prefixes whose addresses are classified by the IPv4 address they embed, and where it sits. */
const IPV4_EMBEDDING: readonly { range: Range; shift: bigint; label: string }[] = [
  { range: v6("::ffff:0:0/96", "IPv4-mapped"), shift: 0n, label: "IPv4-mapped" },
  { range: v6("64:ff9b::/96", "NAT64"), shift: 0n, label: "NAT64" },
  { range: v6("2002::/16", "6to4"), shift: 80n, label: "6to4" },
];

/** Parses strict dotted-decimal IPv4 (`a.b.c.d`, no leading zeros) to a 32-bit number, else null. */
export function parseIPv4(text: string): number | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    // Leading zeros are refused: inet_aton would read "0177" as octal (127), we would not.
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return null;
    const octet = Number(part);
    if (octet > 255) return null;
    value = value * 256 + octet;
  }
  return value;
}

/** Parses an IPv6 address (RFC 4291 §2.2 text forms, optional dotted IPv4 tail) to 8 groups, else null. Zone ids are refused. */
export function parseIPv6(text: string): number[] | null {
  if (text.includes("%")) return null;
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const parseSide = (side: string): number[] | null => {
    if (side === "") return [];
    const out: number[] = [];
    const pieces = side.split(":");
    for (const [i, piece] of pieces.entries()) {
      if (i === pieces.length - 1 && piece.includes(".")) {
        const embedded = parseIPv4(piece);
        if (embedded === null) return null;
        out.push(embedded >>> 16, embedded & 0xffff);
      } else if (/^[0-9a-fA-F]{1,4}$/.test(piece)) {
        out.push(parseInt(piece, 16));
      } else {
        return null;
      }
    }
    return out;
  };
  const head = parseSide(halves[0] ?? "");
  const tail = halves.length === 2 ? parseSide(halves[1] ?? "") : [];
  if (head === null || tail === null) return null;
  // A dotted IPv4 tail is only valid at the very end of the address.
  if (halves.length === 2 && (halves[0] ?? "").includes(".")) return null;
  if (halves.length === 1) return head.length === 8 ? head : null;
  const missing = 8 - head.length - tail.length;
  if (missing < 1) return null;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
}

/** 4 for IPv4, 6 for IPv6, 0 for anything else (same convention as node:net `isIP`). */
export function ipVersion(text: string): 0 | 4 | 6 {
  if (parseIPv4(text) !== null) return 4;
  if (parseIPv6(text) !== null) return 6;
  return 0;
}

/** Strips the brackets URL hosts put around IPv6 literals (`[::1]` → `::1`). */
export function unbracket(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

function groupsToBigInt(groups: readonly number[]): bigint {
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

function inRange(value: bigint, bits: number, range: Range): boolean {
  const hostBits = BigInt(bits - range.prefix);
  return value >> hostBits === range.network >> hostBits;
}

function classifyIPv4(value: number): string | null {
  const big = BigInt(value);
  return IPV4_SPECIAL.find((r) => inRange(big, 32, r))?.name ?? null;
}

/**
 * Why `address` is not globally routable unicast: the name of the special-purpose range it is in
 * (e.g. "loopback (RFC 1122)"), "not an IP address" when unparsable, or null when it is global.
 */
export function specialPurposeRange(address: string): string | null {
  const ipv4 = parseIPv4(address);
  if (ipv4 !== null) return classifyIPv4(ipv4);
  const groups = parseIPv6(address);
  if (groups === null) return "not an IP address";
  const value = groupsToBigInt(groups);
  for (const { range, shift, label } of IPV4_EMBEDDING) {
    if (!inRange(value, 128, range)) continue;
    const embedded = classifyIPv4(Number((value >> shift) & 0xffffffffn));
    return embedded === null ? null : `${label} of ${embedded}`;
  }
  const special = IPV6_SPECIAL.find((r) => inRange(value, 128, r));
  if (special) return special.name;
  return inRange(value, 128, GLOBAL_UNICAST_V6) ? null : "outside global unicast 2000::/3 (IANA)";
}

/** True only for a parsable IPv4/IPv6 address that is globally routable unicast. Fails closed. */
export function isGlobalUnicast(address: string): boolean {
  return specialPurposeRange(address) === null;
}

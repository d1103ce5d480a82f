/** The by-name half of the SSRF policy: host names refused before any lookup or connection. */
import { ipVersion, unbracket } from "./ip-address.js";

/**
 * `localhost`, `localhost.` and every name under it are loopback by definition (RFC 6761 §6.3): refused
 * by name, so they never reach a resolver that might answer NXDOMAIN (502) or something else entirely.
 */
export const isLocalhostName = (hostname: string): boolean => /(?:^|\.)localhost\.?$/i.test(hostname);

/**
 * Special-use and internal DNS suffixes (RFC 6761, RFC 6762 `.local`, `.arpa` incl. RFC 8375 `.home.arpa`,
 * ICANN's reserved `.internal`) and common private conventions. A single-label name (no dot) is
 * refused too: it is resolved through search domains, i.e. on the local network.
 */
const PRIVATE_SUFFIXES = [
  "localhost",
  "local",
  "internal",
  "intranet",
  "private",
  "corp",
  "home",
  "lan",
  "arpa",
  "test",
  "invalid",
  "example",
  "onion",
];

/** Why `hostname` (as `new URL` normalised it) is refused by name, or null when it is a public DNS name. */
export function privateHostReason(hostname: string): string | null {
  const host = unbracket(hostname).toLowerCase().replace(/\.$/, "");
  // WHATWG parsing already turned 2130706433, 0x7f.1, 0177.1 … into dotted decimal, so one check covers all spellings.
  if (ipVersion(host) !== 0) return "IP address literals are not allowed (use a DNS name)";
  // Anything else shaped like a number would be an address to some resolver; never a real DNS name.
  if (/^[0-9.]+$/.test(host) || /^0x[0-9a-f]+$/i.test(host) || host.includes(":"))
    return "address-like hosts are not allowed";
  if (!host.includes(".")) return "single-label names resolve on the local network";
  const suffix = PRIVATE_SUFFIXES.find((s) => host === s || host.endsWith(`.${s}`));
  if (suffix) return `.${suffix} names are private or reserved`;
  return null;
}

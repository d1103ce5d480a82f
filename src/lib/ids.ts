/**
 * Short ids for resources: 48 bits of millisecond time then 100 random bits, in lowercase Crockford
 * base32 (30 chars). Sortable by creation time, URL-safe, never a `-` (the UID separator).
 */
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

export type IdGenerator = () => string;

export function createShortId(now: number = Date.now()): string {
  let time = "";
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const random = crypto.getRandomValues(new Uint8Array(20));
  let rand = "";
  // 20 bytes, 5 bits kept from each: 100 bits of randomness.
  for (const byte of random) rand += ALPHABET[byte & 31];
  return time + rand;
}

export const SHORT_ID_PATTERN = /^[0-9a-hjkmnp-tv-z]{30}$/;

/** Standard base64 (RFC 4648 §4) → bytes with Web APIs only (no Buffer), so it runs on every runtime. */

// One flat character class: a grouped `(?:x{4})*` pattern overflows V8's regexp stack on large input.
const ALPHABET = /^[A-Za-z0-9+/]*(={0,2})$/;

/** Strict: the standard alphabet, padding optional, no whitespace (Jackson's byte[] format). */
export function isBase64(text: string): boolean {
  const match = ALPHABET.exec(text);
  if (!match) return false;
  const padding = match[1]?.length ?? 0;
  if (padding > 0) return text.length % 4 === 0;
  return text.length % 4 !== 1;
}

/** Decoded length without decoding, so oversized input is refused before allocating its bytes. */
export function decodedLength(base64: string): number {
  const unpadded = base64.endsWith("==") ? base64.length - 2 : base64.endsWith("=") ? base64.length - 1 : base64.length;
  return Math.floor((unpadded * 3) / 4);
}

/** Decodes text for which isBase64 holds. */
export function decodeBase64(base64: string): Uint8Array<ArrayBuffer> {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

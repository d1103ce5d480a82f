/**
 * Builds `Content-Disposition` values (RFC 6266): an ASCII `filename` every client understands,
 * plus an RFC 8187 `filename*` carrying the exact UTF-8 name when the ASCII one can't.
 */

import { maskUnsafeChars } from "../lib/name-chars.js";

export type DispositionType = "inline" | "attachment";

// RFC 9110 §5.6.2 token characters: a name made only of these needs no extended parameter.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// RFC 8187 §3.2.1 attr-char: everything else in `filename*` is percent-encoded.
const ATTR_CHAR = /^[!#$&+\-.^_`|~0-9A-Za-z]$/;
// RFC 6266 App. D: some clients percent-decode `filename`, so `%XX` must not appear in it.
const PERCENT_ESCAPE = /%[0-9A-Fa-f]{2}/;

export function contentDisposition(filename: string, type: DispositionType = "inline"): string {
  // The common case, a plain token name ("report.pdf"), needs no escaping at all.
  if (TOKEN.test(filename) && !PERCENT_ESCAPE.test(filename)) return `${type}; filename="${filename}"`;
  // Controls would split the header; bidirectional controls (in names stored before they were
  // refused) would make the name display as another. Neither is ever sent.
  const name = maskUnsafeChars(filename);
  if (name === "") return type;
  const params = [`filename="${asciiFallback(name)}"`];
  if (!TOKEN.test(name) || PERCENT_ESCAPE.test(name)) params.push(`filename*=UTF-8''${encodeExtValue(name)}`);
  return `${type}; ${params.join("; ")}`;
}

/** A quoted-string (RFC 9110 §5.6.4) holding only printable ASCII: "café ☕.txt" → "cafe _.txt". */
function asciiFallback(name: string): string {
  return name
    .normalize("NFKD")
    .replace(/\p{M}/gu, "") // drop combining accents so "é" degrades to "e", not "_"
    .normalize("NFC")
    .replace(/[^\x20-\x7e]/gu, "_") // one "_" per remaining non-ASCII code point
    .replace(/%(?=[0-9A-Fa-f]{2})/g, "_")
    .replace(/["\\]/g, "\\$&");
}

/** RFC 8187 §3.2.1 value-chars: UTF-8 bytes, percent-encoded unless attr-char. */
function encodeExtValue(value: string): string {
  let out = "";
  for (const byte of new TextEncoder().encode(value)) {
    const char = String.fromCharCode(byte);
    out += ATTR_CHAR.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/**
 * Entry names → safe relative paths. Decodes the name (APPNOTE.TXT 4.4.4 bit 11, Appendix D), then
 * refuses anything that could escape, alias or shadow another path once entries become resources.
 */
import { hasBidiControl, hasControlChar, hasLineSeparator } from "../lib/name-chars.js";
import { quoteName, ZipError } from "./errors.js";
import type { ZipLimits } from "./limits.js";

/** CP437 bytes 0x80–0xFF (Appendix D: the code page for names without bit 11). */
const CP437_HIGH =
  "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u00a0";

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();
const utf8Length = (s: string) => encoder.encode(s).length;

/** APPNOTE 4.4.17.1: the path separator is always a forward slash. */
const SEPARATOR = "/";
const DRIVE = /^[A-Za-z]:/;
/** POSIX and Windows both cap a single file name at 255 bytes. */
const MAX_SEGMENT_BYTES = 255;

/**
 * Bit 11 set: the name must be valid UTF-8. Unset: ASCII as is; otherwise UTF-8 if it decodes
 * (macOS Archive Utility and Info-ZIP on Linux write UTF-8 without setting the flag), else CP437.
 */
export function decodeEntryName(raw: Uint8Array, utf8Flag: boolean, index: number): string {
  try {
    return utf8.decode(raw);
  } catch {
    if (utf8Flag) throw new ZipError("corrupt", `zip entry #${index} is flagged UTF-8 but its name is not valid UTF-8`);
  }
  let name = "";
  for (const byte of raw) name += byte < 0x80 ? String.fromCharCode(byte) : CP437_HIGH[byte - 0x80]!;
  return name;
}

export interface SafePath {
  /** Relative path without a trailing slash, segments joined by `/`. */
  path: string;
  segments: string[];
  isDirectory: boolean;
}

const unsafe = (name: string, why: string) => new ZipError("unsafe-path", `zip entry ${quoteName(name)} ${why}`);

/** Validates one decoded name; a trailing `/` marks a directory (APPNOTE 4.3.8). */
export function toSafePath(name: string, limits: Readonly<ZipLimits>): SafePath {
  if (utf8Length(name) > limits.maxPathLength) {
    throw new ZipError("limit", `zip entry ${quoteName(name)} has a name longer than ${limits.maxPathLength} bytes`);
  }
  if (name === "") throw unsafe(name, "has an empty name");
  // The same characters as in any resource name (lib/name-chars.ts): a path is names joined by "/".
  if (hasControlChar(name) || hasLineSeparator(name) || hasBidiControl(name))
    throw unsafe(name, "has a control or bidirectional formatting character in its name");
  if (name.includes("\\")) throw unsafe(name, "uses a backslash; zip paths must use '/'");
  if (name.startsWith(SEPARATOR) || DRIVE.test(name)) throw unsafe(name, "is an absolute path");
  const isDirectory = name.endsWith(SEPARATOR);
  const path = isDirectory ? name.slice(0, -1) : name;
  const segments = path.split(SEPARATOR);
  for (const segment of segments) {
    if (segment === "") throw unsafe(name, "has an empty path segment");
    if (segment === "." || segment === "..") throw unsafe(name, `has a '${segment}' path segment`);
    if (utf8Length(segment) > MAX_SEGMENT_BYTES)
      throw unsafe(name, `has a path segment longer than ${MAX_SEGMENT_BYTES} bytes`);
  }
  if (segments.length > limits.maxDepth) {
    const detail = `zip entry ${quoteName(name)} is nested ${segments.length} deep; at most ${limits.maxDepth} levels are allowed`;
    throw new ZipError("limit", detail);
  }
  return { path, segments, isDirectory };
}

/**
 * Detects names that would collide once entries become resources: exact duplicates, names equal
 * after Unicode NFC (macOS stores NFD, so "é" can arrive two ways), and a file that is also used
 * as a directory (`a` and `a/b`), whichever order they come in.
 */
export class PathRegistry {
  readonly #seen = new Map<string, SafePath>();
  readonly #directoryPrefixes = new Set<string>();
  readonly #files: [key: string, path: string][] = [];

  add(entry: SafePath): void {
    const key = entry.path.normalize("NFC");
    const earlier = this.#seen.get(key);
    if (earlier) {
      const how =
        earlier.path === entry.path
          ? "is listed twice"
          : `duplicates ${quoteName(earlier.path)} after Unicode normalisation`;
      const kinds = earlier.isDirectory === entry.isDirectory ? "" : " (one as a file, one as a directory)";
      throw unsafe(entry.path, `${how}${kinds}`);
    }
    this.#seen.set(key, entry);
    const depth = entry.isDirectory ? entry.segments.length : entry.segments.length - 1;
    for (let i = 1; i <= depth; i++)
      this.#directoryPrefixes.add(entry.segments.slice(0, i).join(SEPARATOR).normalize("NFC"));
    if (!entry.isDirectory) this.#files.push([key, entry.path]);
  }

  /** Call once after every entry is added. */
  checkConflicts(): void {
    for (const [key, path] of this.#files) {
      if (this.#directoryPrefixes.has(key))
        throw unsafe(path, "is a file but also used as a directory by other entries");
    }
  }
}

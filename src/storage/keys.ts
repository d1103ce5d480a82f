/**
 * Blob key rules — the one place keys are validated — and content-addressed keys that never carry
 * user-controlled text (tenant ids are hashed). Web APIs only, so it runs on Workers too.
 */
import { StorageError, type BlobKey } from "./blob-store.js";
import { toHex } from "../lib/sha256.js";

/** Longest key accepted, in characters (keys are ASCII, so also bytes). */
export const MAX_KEY_LENGTH = 512;
/** Longest segment: the common filesystem NAME_MAX, so every key is a valid fs path. */
export const MAX_SEGMENT_LENGTH = 255;

// A leading dot is refused: that rules out `.`/`..` and reserves dot-names (fs `.tmp/`, probes)
// for driver bookkeeping, so no key can collide with them.
const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;
const TENANT_PREFIX = /^t\/[0-9a-f]{32}\/$/;
// In `u` mode a well-formed surrogate pair is one code point, so this only matches lone halves.
const LONE_SURROGATE = /\p{Cs}/u;

const invalid = (message: string) => new StorageError("keys", "INVALID_KEY", message);

/** Quotes (a bounded piece of) rejected input for error messages, escaping control characters. */
const quote = (raw: string) => JSON.stringify(raw.length > 64 ? `${raw.slice(0, 64)}…` : raw);

/** True for a lowercase hex SHA-256 digest. */
export const isSha256Hex = (value: string): boolean => SHA256_HEX.test(value);

/**
 * Validates a storage key: `/`-joined segments of `[A-Za-z0-9._-]`, none empty or starting with
 * `.`, no leading/trailing `/`, at most MAX_KEY_LENGTH characters. Throws StorageError INVALID_KEY.
 */
export function parseBlobKey(raw: string): BlobKey {
  if (raw.length === 0) throw invalid("key is empty");
  if (raw.length > MAX_KEY_LENGTH) throw invalid(`key is longer than ${MAX_KEY_LENGTH} characters`);
  if (raw.startsWith("/")) throw invalid(`key must be relative: ${quote(raw)}`);
  if (raw.includes("\\")) throw invalid(`key must not contain a backslash: ${quote(raw)}`);
  if (/[\u0000-\u001f\u007f]/.test(raw)) throw invalid(`key must not contain control characters: ${quote(raw)}`);
  for (const segment of raw.split("/")) {
    if (segment.length === 0) throw invalid(`key has an empty segment: ${quote(raw)}`);
    if (segment.length > MAX_SEGMENT_LENGTH) throw invalid(`key segment longer than ${MAX_SEGMENT_LENGTH} characters`);
    if (segment.startsWith(".")) throw invalid(`key segment must not start with '.': ${quote(raw)}`);
    if (!SEGMENT.test(segment)) throw invalid(`key may only contain A-Z a-z 0-9 . _ - and '/': ${quote(raw)}`);
  }
  return raw as BlobKey;
}

/** `parseBlobKey`, or null for a name that is not a valid key (listing skips foreign objects and files). */
export function tryParseBlobKey(raw: string): BlobKey | null {
  try {
    return parseBlobKey(raw);
  } catch {
    return null;
  }
}

/**
 * Validates a `list()` prefix: empty (everything), or a key prefix that may end in `/` or stop
 * mid-segment (`t/ab`). Same character rules as keys. Throws StorageError INVALID_KEY.
 */
export function parseKeyPrefix(raw: string): string {
  if (raw === "") return raw;
  parseBlobKey(raw.endsWith("/") ? raw.slice(0, -1) : raw);
  return raw;
}

/** Prefixes of recent tenants: a WebCrypto digest per create was 2.3 % of an ingest's CPU (bench ingest profile). */
const knownPrefixes = new Map<string, string>();
const KNOWN_PREFIXES_MAX = 1024;

/**
 * The key prefix under which one tenant's content-addressed blobs live: `t/<32 hex>/`, the first
 * 128 bits of SHA-256(UTF-8 tenant id). The tenant id itself never appears in a key.
 */
export async function tenantPrefix(tenantId: string): Promise<string> {
  const known = knownPrefixes.get(tenantId);
  if (known !== undefined) return known;
  if (tenantId.length === 0) throw invalid("tenant id is empty");
  // TextEncoder maps every lone surrogate to U+FFFD, which would let distinct ids share a prefix.
  if (LONE_SURROGATE.test(tenantId)) throw invalid("tenant id is not well-formed Unicode");
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(tenantId));
  const prefix = `t/${toHex(new Uint8Array(digest)).slice(0, 32)}/`;
  if (knownPrefixes.size >= KNOWN_PREFIXES_MAX) knownPrefixes.clear(); // bounded; rebuilt from the next creates
  knownPrefixes.set(tenantId, prefix);
  return prefix;
}

/**
 * Synchronous form of `contentKey` for `putContentAddressed`'s `keyFor` callback:
 * `<prefix><sha[0:2]>/<sha[2:4]>/<sha>`, where `prefix` comes from `tenantPrefix`.
 */
export function contentKeyUnder(prefix: string, sha256: string): BlobKey {
  if (!TENANT_PREFIX.test(prefix)) throw invalid(`not a tenant prefix: ${quote(prefix)}`);
  if (!isSha256Hex(sha256)) throw invalid(`not a lowercase hex SHA-256: ${quote(sha256)}`);
  return parseBlobKey(`${prefix}${sha256.slice(0, 2)}/${sha256.slice(2, 4)}/${sha256}`);
}

/** The content-addressed key of a blob: `t/<tenant hash>/<sha[0:2]>/<sha[2:4]>/<sha>`. */
export async function contentKey(tenantId: string, sha256: string): Promise<BlobKey> {
  return contentKeyUnder(await tenantPrefix(tenantId), sha256);
}

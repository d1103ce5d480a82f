/**
 * Staged blobs: bytes a request keeps for itself while it runs (a multipart file part that arrived
 * before the fields saying where it belongs). They live under `staging/`, outside every tenant's `t/`
 * area, so the content collector never takes them for content, and each is named by the time it was
 * made, so a collector pass can remove what a crashed request left behind.
 */
import type { BlobKey } from "./blob-store.js";
import { toHex } from "../lib/sha256.js";
import { parseBlobKey } from "./keys.js";

export const STAGING_PREFIX = "staging/";
/**
 * A staged blob older than this belongs to no running request: far above any request's lifetime,
 * and above any clock skew between instances sharing the store.
 */
export const STAGING_MAX_AGE_MS = 24 * 60 * 60 * 1000;

const NAME = /^(\d{1,15})-[0-9a-f]{32}$/;

/** A fresh key under `staging/<area>/`, named by `now` (ms) and 128 random bits. */
export const stagingKey = (area: string, now: number): BlobKey =>
  parseBlobKey(`${STAGING_PREFIX}${area}/${now}-${toHex(crypto.getRandomValues(new Uint8Array(16)))}`);

/** When `key` was staged (ms), or null for a key this module did not name. */
export function stagedAt(key: string): number | null {
  const match = NAME.exec(key.slice(key.lastIndexOf("/") + 1));
  return key.startsWith(STAGING_PREFIX) && match ? Number(match[1]) : null;
}

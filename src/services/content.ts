/**
 * Content blobs for resources: stored content-addressed per tenant (identical bytes are kept once),
 * discarded only when no row references them, and opened for serveBlob. A row is always written
 * after its blob is durable, so no row ever points at a missing blob.
 */
import { ProblemError } from "../errors.js";
import { contentPolicy } from "../lib/content-policy.js";
import type { BlobEntity, OpenBlob } from "../lib/serve-blob.js";
import type { ResourceStore } from "../metadata/resource-store.js";
import { type BlobInfo, type BlobKey, type BlobStore, StorageError } from "../storage/blob-store.js";
import { contentKeyUnder, tenantPrefix } from "../storage/keys.js";
import type { ExpectedDigest } from "./content-source.js";

export type StoredBlob = BlobInfo & { key: BlobKey; created: boolean };

/** 422 naming the field or header whose digest the received bytes did not match. */
export function digestMismatch(expected: ExpectedDigest, cause?: unknown): ProblemError {
  const detail = `the content received does not hash to the announced sha-256 ${expected.sha256}`;
  return new ProblemError("DIGEST_MISMATCH", detail, { errors: [{ pointer: expected.pointer, detail }], cause });
}

/** What a served representation needs from a resource or revision row. */
export interface ContentFacts {
  blobKey: string;
  size: number;
  sha256: string;
  mediaType: string;
  name: string;
  updatedAt: number;
  /** Set on the files of a zip package. */
  parentUid?: string | null;
}

export interface ContentStoreDeps {
  blobs: BlobStore;
  store: ResourceStore;
  maxResourceBytes: number;
  /** CMS_CONTENT_ORIGIN: the only origin that renders active content, when set. */
  contentOrigin?: string;
}

export type ContentStore = ReturnType<typeof createContentStore>;

export function createContentStore({ blobs, store, maxResourceBytes, contentOrigin }: ContentStoreDeps) {
  const contentHost = contentOrigin ? new URL(contentOrigin).host : undefined;
  // A Host header spelled as a URL would (case, default port), so raw node:http headers and
  // Hono's request URL reach the same decision.
  const onContentOrigin = (host: string | undefined) =>
    host !== undefined && URL.canParse(`http://${host}`) && new URL(`http://${host}`).host === contentHost;

  return {
    /**
     * Streams `body` into the tenant's content-addressed area. 413 PAYLOAD_TOO_LARGE, naming
     * `pointer`, once more than `maxResourceBytes` actually arrive (declared lengths are not trusted).
     */
    async put(tenantId: string, body: ReadableStream<Uint8Array>, pointer: string, expected?: ExpectedDigest): Promise<StoredBlob> {
      const prefix = await tenantPrefix(tenantId);
      try {
        return await blobs.putContentAddressed(body, (info) => contentKeyUnder(prefix, info.sha256), {
          maxBytes: maxResourceBytes,
          expectedSha256: expected?.sha256,
        });
      } catch (err) {
        if (err instanceof StorageError && err.code === "HASH_MISMATCH" && expected) throw digestMismatch(expected, err);
        if (err instanceof StorageError && err.code === "TOO_LARGE") {
          throw new ProblemError("PAYLOAD_TOO_LARGE", `the content exceeds the limit of ${maxResourceBytes} bytes`, {
            errors: [{ pointer, detail: `content larger than ${maxResourceBytes} bytes` }],
            cause: err,
          });
        }
        throw err;
      }
    },

    /**
     * Removes blobs this request created if no row references them (identical content may be shared
     * with other rows). Best effort: a failure leaves an unreferenced blob, never a dangling row.
     */
    async discard(stored: readonly StoredBlob[]): Promise<void> {
      for (const blob of stored) {
        if (!blob.created) continue;
        try {
          if ((await store.countByBlobKey(blob.key)) === 0) await blobs.delete(blob.key);
        } catch {
          // An orphaned blob only costs space; the original error matters more to the caller.
        }
      }
    },

    /**
     * Deletes each blob no row references any more (after a purge). Returns how many were removed.
     * Known gap: a create that deduplicates onto one of these blobs between the count and the delete
     * would be left without content; purges are rare admin actions, and a periodic sweep comparing
     * `blobs.list()` with the tables is the planned remedy (not done yet).
     */
    async collect(keys: readonly string[]): Promise<number> {
      let removed = 0;
      for (const key of keys) {
        if ((await store.countByBlobKey(key)) > 0) continue;
        await blobs.delete(key as BlobKey);
        removed++;
      }
      return removed;
    },

    /** The content's bytes if the blob store holds them in memory (see `BlobStore.peek`), with no I/O. */
    inMemory(facts: ContentFacts): Uint8Array<ArrayBuffer> | undefined {
      return blobs.peek?.(facts.blobKey as BlobKey);
    },

    /**
     * What serveBlob needs to answer GET/HEAD for a row asked for on `requestHost` (the request
     * URL's host): the representation, with how a browser may show it (src/lib/content-policy.ts).
     */
    serve(facts: ContentFacts, requestHost: string | undefined): { entity: BlobEntity; open: OpenBlob } {
      const policy = contentPolicy({
        mediaType: facts.mediaType,
        packageFile: Boolean(facts.parentUid),
        apiOriginOnly: contentHost !== undefined && !onContentOrigin(requestHost),
      });
      return {
        entity: {
          size: facts.size,
          etag: `"${facts.sha256}"`,
          sha256: facts.sha256,
          lastModified: new Date(facts.updatedAt),
          contentType: policy.contentType,
          // Files of a package are named by their path; the download name is its last segment.
          filename: facts.name.slice(facts.name.lastIndexOf("/") + 1),
          disposition: policy.disposition,
          contentSecurityPolicy: policy.csp,
        },
        open: async (range) => {
          const blob = await blobs.get(facts.blobKey as BlobKey, range);
          // A row without its blob is a server fault (the volume was tampered with), never bad input.
          if (!blob) throw new Error(`blob ${facts.blobKey} is missing`);
          // Served from memory when the driver holds the bytes (its stream is then never created).
          return blob.bytes ?? blob.body;
        },
      };
    },
  };
}

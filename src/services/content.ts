/**
 * Content blobs for resources: stored content-addressed per tenant (identical bytes are kept once),
 * deleted only by the blob collector when nothing references or awaits them, and opened for
 * serveBlob. A row is always written after its blob is durable and reserved (blob-collector.ts), so
 * no row points at a missing blob unless it was deleted behind the service's back: such a read
 * answers 500 BLOB_MISSING (blob-missing.ts).
 */
import type { Logger } from "../lib/logger.js";
import { ProblemError } from "../problems.js";
import { derivativePrefix } from "../images/derivative-keys.js";
import { readImageDimensions } from "../images/image-header.js";
import { sniffMediaType } from "../lib/media-sniff.js";
import { isBlobNotReserved } from "../metadata/blob-ledger.js";
import type { DerivativeStore } from "../metadata/derivative-store.js";
import type { ContentFacts } from "../metadata/content-facts.js";
import type { Metrics } from "../metrics/metrics.js";
import {
  type BlobFile,
  type BlobInfo,
  type BlobKey,
  type ByteRange,
  type BlobStore,
  type LocalBlobFile,
  StorageError,
} from "../storage/blob-store.js";
import { contentKeyUnder, tenantPrefix } from "../storage/keys.js";
import type { ExpectedDigest } from "./content-source.js";
import type { BlobCollector } from "./blob-collector.js";
import { blobMissingProblems } from "./blob-missing.js";

/** What `adopt` reads of adopted content: an image header and a media type signature lie within it. */
const HEAD_BYTES = 64 * 1024;

/** A stored blob, with a raster image's width and height read from its header on the way (else null). */
export type StoredBlob = BlobInfo & { key: BlobKey; created: boolean; width: number | null; height: number | null };

/** 422 naming the field or header whose digest the received bytes did not match. */
export function digestMismatch(expected: ExpectedDigest, cause?: unknown): ProblemError {
  const detail = `the content received does not hash to the announced sha-256 ${expected.sha256}`;
  return new ProblemError("DIGEST_MISMATCH", detail, { errors: [{ pointer: expected.pointer, detail }], cause });
}

export interface ContentServiceDeps {
  blobs: BlobStore;
  collector: BlobCollector;
  maxResourceBytes: number;
  /** CMS_CONTENT_ORIGIN: the only origin that renders active content, when set. */
  contentOrigin?: string;
  /** Whether reads are public and how long caches may keep mutable content (src/http/cache-policy.ts). */
  cache?: { publicRead: boolean; maxAge: number; staleWhileRevalidate: number };
  /** Counts what was stored (metrics/metrics.ts); none when absent. */
  metrics?: Pick<Metrics, "ingest">;
  /** The image derivative cache's index: a purged source's derivatives are forgotten there too. */
  derivatives?: Pick<DerivativeStore, "forgetUnder">;
  /** Where a blob missing under its row is reported (once per key). */
  logger?: Logger;
  /** CMS_DIRECT_READ_MIN_BYTES: getData of content this large redirects to the bucket; 0 = never. */
  directReadMinBytes?: number;
}

/** How long a direct read's presigned GET is valid: long enough to follow, too short to share. */
const DIRECT_READ_SECONDS = 300;

export type ContentService = ReturnType<typeof createContentService>;

export function createContentService({
  blobs,
  collector,
  maxResourceBytes,
  contentOrigin,
  cache = { publicRead: false, maxAge: 0, staleWhileRevalidate: 0 },
  metrics,
  derivatives,
  logger,
  directReadMinBytes = 0,
}: ContentServiceDeps) {
  const blobMissing = blobMissingProblems(logger);
  /**
   * Whether the store still holds the content: for answers that read none of it before their head
   * (several ranges), so they answer BLOB_MISSING as a GET would. At once (no I/O) for empty
   * content and bytes in memory. A storage fault rejects.
   */
  const present = (facts: ContentFacts): boolean | Promise<boolean> => {
    if (facts.size === 0 || blobs.peek?.(facts.blobKey as BlobKey)) return true;
    return blobs.head(facts.blobKey as BlobKey).then((info) => info !== null);
  };
  return {
    /**
     * Streams `body` into the tenant's content-addressed area and reserves the blob for a row insert
     * (which consumes the reservation), or `discard` it. 413 PAYLOAD_TOO_LARGE, naming `pointer`,
     * once more than `maxResourceBytes` actually arrive (declared lengths are not trusted).
     */
    async put(
      tenantId: string,
      body: ReadableStream<Uint8Array>,
      pointer: string,
      expected?: ExpectedDigest,
    ): Promise<StoredBlob> {
      const prefix = await tenantPrefix(tenantId);
      let reserved: BlobKey | undefined;
      const image = readImageDimensions(body);
      try {
        const stored = await blobs.putContentAddressed(image.body, (info) => contentKeyUnder(prefix, info.sha256), {
          maxBytes: maxResourceBytes,
          expectedSha256: expected?.sha256,
          reserve: async (key) => {
            await collector.reserve(key);
            reserved = key;
          },
        });
        metrics?.ingest(stored.size);
        const dimensions = image.dimensions();
        return { ...stored, width: dimensions?.width ?? null, height: dimensions?.height ?? null };
      } catch (err) {
        if (reserved) await collector.release(reserved).catch(() => {}); // what matters is the error below
        if (err instanceof StorageError && err.code === "HASH_MISMATCH" && expected)
          throw digestMismatch(expected, err);
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
     * Content already in the store as a reserved blob under the tenant's content-addressed key,
     * without passing its bytes through the service (direct uploads, docs/direct-storage.md):
     * reserves the key, `place`s the content there unless it is there already (a server-side copy
     * of a checked upload), and checks the stored size and SHA-256. Only the first 64 KiB are read,
     * for the media type and an image's dimensions. Release it with `discard` if no row follows.
     */
    async adopt(
      tenantId: string,
      expected: BlobInfo,
      place: ((key: BlobKey) => Promise<void>) | null,
    ): Promise<{ blob: StoredBlob; sniffedType: string | undefined }> {
      const key = contentKeyUnder(await tenantPrefix(tenantId), expected.sha256);
      await collector.reserve(key);
      try {
        let info = await blobs.head(key);
        const created = info === null;
        if (info === null && place) {
          await place(key);
          info = await blobs.head(key);
        }
        if (info === null || info.size !== expected.size || info.sha256 !== expected.sha256)
          throw new StorageError("direct", "HASH_MISMATCH", `the content at ${key} is not the expected content`);
        const head =
          info.size === 0 ? null : await blobs.get(key, { start: 0, end: Math.min(info.size, HEAD_BYTES) - 1 });
        const image = readImageDimensions(head?.body ?? new Response(new Uint8Array(0)).body!);
        const sniffed = sniffMediaType(image.body);
        await sniffed.body.pipeTo(new WritableStream());
        const dimensions = image.dimensions();
        return {
          blob: { ...info, key, created, width: dimensions?.width ?? null, height: dimensions?.height ?? null },
          sniffedType: await sniffed.mediaType(),
        };
      } catch (err) {
        await collector.release(key).catch(() => {});
        throw err;
      }
    },

    /**
     * Gives up the reservations of blobs a failed request stored, deleting those nothing else needs
     * (identical content may be shared with other rows). Best effort: what a failure here leaves
     * behind, the collector deletes after the grace period; never a dangling row.
     */
    async discard(stored: readonly StoredBlob[]): Promise<void> {
      for (const blob of stored) {
        try {
          await collector.release(blob.key);
        } catch {
          // An orphaned blob only costs space until the next pass; the original error matters more.
        }
      }
    },

    /** Deletes each blob nothing references or awaits any more (after a purge). How many were deleted. */
    async collect(keys: readonly string[]): Promise<number> {
      const deleted = await collector.collect(keys);
      // Image derivatives (a cache beside the content) go with their source blob.
      for (const key of keys) {
        const prefix = derivativePrefix(key);
        if (!prefix || (await blobs.head(key as BlobKey))) continue;
        for await (const derivative of blobs.list(prefix)) await blobs.delete(derivative);
        await derivatives?.forgetUnder(prefix);
      }
      return deleted;
    },

    /**
     * The error a failed row insert should surface: a blob claimed by the collector while the
     * request was in flight (its reservation lapsed) is a retryable 503, anything else unchanged.
     */
    insertFailure(err: unknown): unknown {
      if (!isBlobNotReserved(err)) return err;
      return new ProblemError(
        "UNAVAILABLE",
        "the stored content was collected while this request was in flight; retry",
        {
          headers: { "retry-after": "1" },
          cause: err,
        },
      );
    },

    /** The BLOB_MISSING problem for a row's blob key the store lost (logged once per key). */
    missing: blobMissing,

    /** Throws BLOB_MISSING unless the store still holds the content (see `present`). */
    async ensurePresent(facts: ContentFacts): Promise<void> {
      if (!(await present(facts))) throw blobMissing(facts.blobKey);
    },

    /** The content's bytes if the blob store holds them in memory (see `BlobStore.peek`), with no I/O. */
    inMemory(facts: ContentFacts): Uint8Array<ArrayBuffer> | undefined {
      return blobs.peek?.(facts.blobKey as BlobKey);
    },

    /**
     * The content opened for positional reads (see `BlobStore.openFile`), or undefined when the blob
     * store has no local files. Null when the blob is missing. The caller releases it.
     */
    openFile(facts: ContentFacts): Promise<BlobFile | null> | undefined {
      return blobs.openFile?.(facts.blobKey as BlobKey);
    },

    /**
     * The content's local file when the blob store has one (the fs driver) and it holds exactly the
     * row's size; otherwise null (missing, damaged, or a store without files): the app answers then.
     */
    async localFile(facts: ContentFacts): Promise<LocalBlobFile | null> {
      const file = await blobs.localFile?.(facts.blobKey as BlobKey);
      return file && file.size === facts.size ? file : null;
    },

    /**
     * The smallest content size answered by a redirect to the bucket (docs/direct-storage.md), or 0
     * when none is (the setting is 0, or the store has no presigned URLs): the fast paths leave such
     * GETs to the route.
     */
    directReadMin: blobs.direct ? directReadMinBytes : 0,

    /**
     * A presigned GET of the content on which the bucket answers with `headers`' type, disposition and
     * caching, valid 300 s, or less for a signed link with `linkSeconds` left: the URL expires before
     * the link does (a second early, as the link and the signature count whole seconds apart). Null
     * when this content is answered by the service, as it is in a link's last second.
     */
    async directRead(
      facts: ContentFacts,
      headers: Record<string, string>,
      linkSeconds?: number,
    ): Promise<string | null> {
      const { direct } = blobs;
      if (!direct || directReadMinBytes === 0 || facts.size < directReadMinBytes) return null;
      const seconds = Math.min(DIRECT_READ_SECONDS, Math.floor(linkSeconds ?? Number.POSITIVE_INFINITY) - 1);
      if (seconds < 1) return null;
      return direct.presignGet(facts.blobKey as BlobKey, seconds, {
        contentType: headers["content-type"] ?? "application/octet-stream",
        contentDisposition: headers["content-disposition"],
        cacheControl: headers["cache-control"],
      });
    },

    /** CMS_CONTENT_ORIGIN, for the HTTP layer's per-origin representations (src/delivery/content-entity.ts). */
    contentOrigin,

    /** The cache settings, for the HTTP layer's Cache-Control (src/http/cache-policy.ts). */
    cache,

    /** The content's bytes (or `range` of them): from memory when the driver holds them, else a stream. */
    async read(facts: ContentFacts, range?: ByteRange): Promise<Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array>> {
      const blob = await blobs.get(facts.blobKey as BlobKey, range);
      if (!blob) throw blobMissing(facts.blobKey);
      // Served from memory when the driver holds the bytes (its stream is then never created).
      return blob.bytes ?? blob.body;
    },
  };
}

/**
 * The S3 BlobStore: puts staged in memory or as a multipart upload, committed by PutObject or a
 * server-side CopyObject; reads, listing and the writability probe. Options are parsed in ../s3.ts.
 */
import { Sha256 } from "../../../lib/sha256.js";
import {
  StorageError,
  type BlobInfo,
  type BlobKey,
  type BlobObject,
  type BlobStore,
  type ByteRange,
  type DirectStorage,
  type PutOptions,
} from "../../blob-store.js";
import { parseBlobKey, parseKeyPrefix, tryParseBlobKey } from "../../keys.js";
import { decodeOwner, encodeOwner, OWNER_MARKER } from "../utils/owner-marker.js";
import { commitContentAddressed, targetOrCancel } from "../utils/put-checks.js";
import { deleteQuietly, type S3Client, TEMP_PREFIX } from "./client.js";
import { createS3Direct } from "./direct.js";
import { DRIVER } from "./errors.js";
import { infoFromHead, objectFromGet, SHA256_META } from "./read.js";
import { stageBody, type Staged } from "./stage.js";
import { hasRoot, xmlText, xmlTexts } from "./xml.js";
import { utf8Body } from "./utf8.js";

/** Driver bookkeeping (staged uploads, probes) lives under `<prefix>.tmp/`: never a valid BlobKey. */
const TMP = TEMP_PREFIX;

export interface S3StoreSettings {
  /** Prepended to every key: empty or ending in `/`, already validated. */
  prefix: string;
  partSizeBytes: number;
  maxConcurrentParts: number;
}

export class S3Store implements BlobStore {
  readonly driver = DRIVER;
  readonly #client: S3Client;
  readonly #prefix: string;
  readonly #partSizeBytes: number;
  readonly #maxConcurrentParts: number;
  readonly direct: DirectStorage;

  constructor(client: S3Client, settings: S3StoreSettings) {
    this.direct = createS3Direct(client, settings.prefix, TMP);
    this.#client = client;
    this.#prefix = settings.prefix;
    this.#partSizeBytes = settings.partSizeBytes;
    this.#maxConcurrentParts = settings.maxConcurrentParts;
  }

  async put(key: BlobKey, body: ReadableStream<Uint8Array>, options: PutOptions = {}): Promise<BlobInfo> {
    const target = targetOrCancel(body, () => this.#objectKey(key));
    const staged = await this.#stage(body, options);
    await this.#commit(staged, target);
    return staged.info;
  }

  /**
   * Small bodies are hashed in memory, so their final key is known before anything is sent: HEAD,
   * then one PutObject. Larger ones are staged under `.tmp/` first, then copied server-side (or
   * dropped if the key exists). Two concurrent first uploads may both write; same key, same bytes.
   */
  async putContentAddressed(
    body: ReadableStream<Uint8Array>,
    keyFor: (info: BlobInfo) => BlobKey,
    options: PutOptions = {},
  ): Promise<BlobInfo & { key: BlobKey; created: boolean }> {
    const staged = await this.#stage(body, options);
    return commitContentAddressed(staged.info, keyFor, options.reserve, {
      exists: async (key) => (await this.#head(this.#objectKey(key))) !== null,
      commit: (key) => this.#commit(staged, this.#objectKey(key)),
      discard: () => this.#discard(staged),
    });
  }

  async get(key: BlobKey, range?: ByteRange): Promise<BlobObject | null> {
    const target = this.#objectKey(key);
    const response = await this.#client.send("GetObject", {
      method: "GET",
      key: target,
      headers: range ? { Range: `bytes=${range.start}-${range.end}` } : {},
      allow: [404, 416],
    });
    if (response.status === 404) {
      // NoSuchKey is "missing"; NoSuchBucket (also 404) is a misconfiguration, not an empty store.
      const body = await response.text();
      if (xmlText(body, "Code") === "NoSuchBucket") throw await this.#client.error("GetObject", response, body);
      return null;
    }
    if (response.status === 416) {
      await response.body?.cancel();
      throw new RangeError(`byte range ${range?.start}-${range?.end} is outside the blob`);
    }
    return objectFromGet(response, range);
  }

  async head(key: BlobKey): Promise<BlobInfo | null> {
    return this.#head(this.#objectKey(key));
  }

  async delete(key: BlobKey): Promise<void> {
    // DeleteObject answers 204 for a missing key too; 404 would only come from other servers.
    const response = await this.#client.send("DeleteObject", {
      method: "DELETE",
      key: this.#objectKey(key),
      allow: [404],
    });
    await response.body?.cancel();
  }

  /** ListObjectsV2 pages (https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectsV2.html). */
  async *list(prefix: string): AsyncGenerator<BlobKey> {
    const validPrefix = parseKeyPrefix(prefix);
    let token: string | undefined;
    for (;;) {
      const query: Record<string, string> = { "list-type": "2", prefix: this.#prefix + validPrefix };
      if (token !== undefined) query["continuation-token"] = token;
      const response = await this.#client.send("ListObjectsV2", { method: "GET", query });
      const xml = await response.text();
      for (const fullKey of xmlTexts(xml, "Key")) {
        if (!fullKey.startsWith(this.#prefix)) continue;
        // `.tmp/` entries and foreign objects whose names are not valid keys are skipped.
        const key = tryParseBlobKey(fullKey.slice(this.#prefix.length));
        if (key) yield key;
      }
      if (xmlText(xml, "IsTruncated") !== "true") return;
      token = xmlText(xml, "NextContinuationToken");
      if (!token) throw new StorageError(DRIVER, "IO", "ListObjectsV2 is truncated but has no NextContinuationToken");
    }
  }

  /** Writes and deletes a small probe object under `.tmp/`. */
  async check(): Promise<void> {
    const probe = `${this.#prefix}${TMP}probe-${crypto.randomUUID()}`;
    const bytes = utf8Body("probe");
    try {
      await this.#putObject(probe, bytes, new Sha256().update(bytes).hex());
      const response = await this.#client.send("DeleteObject", { method: "DELETE", key: probe, allow: [404] });
      await response.body?.cancel();
    } catch (err) {
      await deleteQuietly(this.#client, probe);
      const detail = err instanceof Error ? err.message.replace(/^\[s3\] /, "") : String(err);
      throw new StorageError(
        DRIVER,
        "IO",
        `bucket "${this.#client.bucket}" at ${this.#client.endpointLabel} is not writable: ${this.#client.redact(detail)}`,
        { cause: err },
      );
    }
  }

  /** One ListObjectsV2 of at most one key under the prefix: a read that also fails for a missing bucket (a HEAD would not). */
  async probe(): Promise<void> {
    try {
      const response = await this.#client.send("ListObjectsV2", {
        method: "GET",
        query: { "list-type": "2", prefix: this.#prefix, "max-keys": "1" },
      });
      await response.body?.cancel();
    } catch (err) {
      const detail = err instanceof Error ? err.message.replace(/^\[s3\] /, "") : String(err);
      throw new StorageError(
        DRIVER,
        "IO",
        `bucket "${this.#client.bucket}" at ${this.#client.endpointLabel} does not answer: ${this.#client.redact(detail)}`,
        {
          cause: err,
        },
      );
    }
  }

  async owner(): Promise<string | null> {
    const response = await this.#client.send("GetObject", {
      method: "GET",
      key: this.#prefix + OWNER_MARKER,
      allow: [404],
    });
    const body = await response.text();
    if (response.status !== 404) return decodeOwner(DRIVER, body);
    // As in `get`: NoSuchBucket is a misconfiguration, not a store without an owner.
    if (xmlText(body, "Code") === "NoSuchBucket") throw await this.#client.error("GetObject", response, body);
    return null;
  }

  /**
   * A conditional PutObject, `If-None-Match: *` (https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html;
   * R2 and MinIO honour it too): 412 when the marker exists, so exactly one racing claim writes it.
   * A server that ignores the header would let a later claim overwrite the first; the read before
   * it narrows that to claims racing within one round trip (s3rver ignores it: the tests add it).
   */
  async claimOwner(id: string): Promise<string> {
    const bytes = encodeOwner(id);
    const existing = await this.owner();
    if (existing !== null) return existing;
    for (let attempt = 1; ; attempt++) {
      const response = await this.#client.send("PutObject", {
        method: "PUT",
        key: this.#prefix + OWNER_MARKER,
        headers: {
          "Content-Type": "application/json",
          "If-None-Match": "*",
          "X-Amz-Content-Sha256": new Sha256().update(bytes).hex(),
        },
        body: bytes,
        // 409 ConditionalRequestConflict: another conditional write of the key is in flight; look again.
        allow: [409, 412],
      });
      await response.body?.cancel();
      if (response.ok) return id;
      const owner = await this.owner();
      if (owner !== null) return owner;
      if (attempt >= 5)
        throw new StorageError(
          DRIVER,
          "IO",
          `PutObject of ${OWNER_MARKER} failed: HTTP ${response.status} and no owner recorded`,
        );
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }

  /** The full object key for a blob key, re-validated (callers may bypass parseBlobKey). */
  #objectKey(key: BlobKey): string {
    return this.#prefix + parseBlobKey(key);
  }

  #stage(body: ReadableStream<Uint8Array>, options: PutOptions): Promise<Staged> {
    return stageBody(this.#client, body, {
      ...options,
      partSizeBytes: this.#partSizeBytes,
      maxConcurrentParts: this.#maxConcurrentParts,
      tempKey: () => `${this.#prefix}${TMP}${crypto.randomUUID()}`,
    });
  }

  /** Puts staged content at `target`: PutObject for inline bytes, else CopyObject from the temp key. */
  async #commit(staged: Staged, target: string): Promise<void> {
    if (staged.kind === "inline") return this.#putObject(target, staged.bytes, staged.info.sha256);
    try {
      // REPLACE: the temp object has no sha256 yet (multipart metadata is fixed at creation).
      const response = await this.#client.send("CopyObject", {
        method: "PUT",
        key: target,
        headers: {
          "x-amz-copy-source": this.#client.copySource(staged.tempKey),
          "x-amz-metadata-directive": "REPLACE",
          "Content-Type": "application/octet-stream",
          [SHA256_META]: staged.info.sha256,
        },
      });
      // "If the error occurs during the copy operation, the error response is embedded in the 200 OK response."
      const body = await response.text();
      if (hasRoot(body, "Error")) throw await this.#client.error("CopyObject", response, body);
    } finally {
      await deleteQuietly(this.#client, staged.tempKey);
    }
  }

  async #discard(staged: Staged): Promise<void> {
    if (staged.kind === "temp") await deleteQuietly(this.#client, staged.tempKey);
  }

  /** PutObject with the exact length; the signed payload hash doubles as an integrity check. */
  async #putObject(key: string, bytes: Uint8Array<ArrayBuffer>, sha256: string): Promise<void> {
    const response = await this.#client.send("PutObject", {
      method: "PUT",
      key,
      headers: { "Content-Type": "application/octet-stream", "X-Amz-Content-Sha256": sha256, [SHA256_META]: sha256 },
      body: bytes,
    });
    await response.body?.cancel();
  }

  async #head(fullKey: string): Promise<BlobInfo | null> {
    // HEAD has no body, so a missing bucket also looks like 404 here; check() catches that case.
    const response = await this.#client.send("HeadObject", { method: "HEAD", key: fullKey, allow: [404] });
    await response.body?.cancel();
    return response.status === 404 ? null : infoFromHead(response);
  }
}

/**
 * Presigned URLs and server-side copies for bytes that go straight between clients and the bucket
 * (docs/direct-storage.md). A presigned PUT signs Content-Length and `x-amz-content-sha256` (the
 * payload hash SigV4 makes the engine check) and the `x-amz-meta-sha256` metadata this driver reads
 * back, so the URL stores exactly one size and one content, or nothing.
 */
import { Sha256 } from "../../../lib/sha256.js";
import type { BlobKey, DirectStorage, PresignedPut, ResponseOverrides } from "../../blob-store.js";
import { parseBlobKey } from "../../keys.js";
import { deleteQuietly, type S3Client } from "./client.js";
import { hasRoot } from "./xml.js";
import { SHA256_META } from "./read.js";

/** The payload-hash header SigV4 verifies when it is signed (Ceph RGW, AWS). */
const PAYLOAD_SHA256 = "x-amz-content-sha256";

export function createS3Direct(client: S3Client, prefix: string, tmp: string): DirectStorage {
  const full = (key: BlobKey) => prefix + parseBlobKey(key);
  let enforces: Promise<boolean> | undefined;

  async function signPut(
    fullKey: string,
    size: number,
    sha256: string,
    expiresInSeconds: number,
  ): Promise<PresignedPut> {
    const headers = { [PAYLOAD_SHA256]: sha256, [SHA256_META]: sha256 };
    const url = await client.presign("PUT", fullKey, expiresInSeconds, {
      headers: { ...headers, "content-length": String(size) },
    });
    // Content-Length is signed but not listed: every HTTP client sends it itself (browsers must).
    return { url, headers };
  }

  /** A PUT of "b" to a URL signed for "a": refused by an engine that checks the signed payload hash. */
  async function probe(): Promise<boolean> {
    const key = `${prefix}${tmp}sha-probe-${crypto.randomUUID()}`;
    const signedFor = new TextEncoder().encode("a");
    const put = await signPut(key, 1, new Sha256().update(signedFor).hex(), 60);
    const response = await client.fetchRaw(
      new Request(put.url, { method: "PUT", headers: put.headers, body: new TextEncoder().encode("b") }),
    );
    await response.body?.cancel();
    if (response.ok) await deleteQuietly(client, key);
    return !response.ok && response.status === 400;
  }

  return {
    origin: client.url().origin,

    presignPut: (key, upload) => signPut(full(key), upload.size, upload.sha256, upload.expiresInSeconds),

    presignGet(key: BlobKey, expiresInSeconds: number, overrides: ResponseOverrides) {
      const query: Record<string, string> = { "response-content-type": overrides.contentType };
      if (overrides.contentDisposition) query["response-content-disposition"] = overrides.contentDisposition;
      if (overrides.cacheControl) query["response-cache-control"] = overrides.cacheControl;
      return client.presign("GET", full(key), expiresInSeconds, { query });
    },

    async copy(from: BlobKey, to: BlobKey) {
      const response = await client.send("CopyObject", {
        method: "PUT",
        key: full(to),
        headers: { "x-amz-copy-source": client.copySource(full(from)) },
      });
      // Errors during the copy come inside a 200 (as in store.ts #commit).
      const body = await response.text();
      if (hasRoot(body, "Error")) throw await client.error("CopyObject", response, body);
    },

    enforcesSignedSha256() {
      enforces ??= probe().catch((err: unknown) => {
        enforces = undefined; // a network fault is no answer: ask again next time
        throw err;
      });
      return enforces;
    },
  };
}

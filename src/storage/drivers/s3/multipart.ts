/**
 * One S3 multipart upload (https://docs.aws.amazon.com/AmazonS3/latest/userguide/mpuoverview.html):
 * create, upload parts with at most N in flight, complete, or abort and free the parts.
 */
import { toHex } from "../../../lib/sha256.js";
import { StorageError } from "../../blob-store.js";
import type { S3Client } from "./client.js";
import { DRIVER } from "./errors.js";
import { escapeXml, hasRoot, xmlText } from "./xml.js";
import { utf8Body } from "./utf8.js";

const noop = () => {};

export class MultipartUpload {
  readonly #client: S3Client;
  readonly #key: string;
  readonly #uploadId: string;
  readonly #maxInFlight: number;
  readonly #etags: string[] = [];
  readonly #inFlight = new Set<Promise<void>>();
  #failure: { error: unknown } | undefined;
  #nextPart = 1;

  private constructor(client: S3Client, key: string, uploadId: string, maxInFlight: number) {
    this.#client = client;
    this.#key = key;
    this.#uploadId = uploadId;
    this.#maxInFlight = maxInFlight;
  }

  /** CreateMultipartUpload (https://docs.aws.amazon.com/AmazonS3/latest/API/API_CreateMultipartUpload.html). */
  static async create(client: S3Client, key: string, maxInFlight: number): Promise<MultipartUpload> {
    const response = await client.send("CreateMultipartUpload", {
      method: "POST",
      key,
      query: { uploads: "" },
      headers: { "Content-Type": "application/octet-stream" },
    });
    const uploadId = xmlText(await response.text(), "UploadId");
    if (!uploadId) throw new StorageError(DRIVER, "IO", "CreateMultipartUpload failed: no UploadId in the response");
    return new MultipartUpload(client, key, uploadId, maxInFlight);
  }

  get uploadId(): string {
    return this.#uploadId;
  }

  /**
   * Starts uploading `bytes` as the next part, first waiting until fewer than `maxInFlight` parts
   * are in flight: that wait is what bounds memory. Throws the first failure of an earlier part.
   */
  async add(bytes: Uint8Array<ArrayBuffer>): Promise<void> {
    this.#throwIfFailed();
    while (this.#inFlight.size >= this.#maxInFlight) {
      await Promise.race(this.#inFlight);
      this.#throwIfFailed();
    }
    const partNumber = this.#nextPart++;
    const upload: Promise<void> = this.#uploadPart(partNumber, bytes).then(
      (etag) => {
        this.#etags[partNumber - 1] = etag;
      },
      (error: unknown) => {
        this.#failure ??= { error };
      },
    );
    const tracked = upload.finally(() => this.#inFlight.delete(tracked));
    this.#inFlight.add(tracked);
  }

  /** Waits for every part, then CompleteMultipartUpload. */
  async complete(): Promise<void> {
    await Promise.all(this.#inFlight);
    this.#throwIfFailed();
    const parts = this.#etags
      .map((etag, i) => `<Part><ETag>${escapeXml(etag)}</ETag><PartNumber>${i + 1}</PartNumber></Part>`)
      .join("");
    const xml = `<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${parts}</CompleteMultipartUpload>`;
    const response = await this.#client.send("CompleteMultipartUpload", {
      method: "POST",
      key: this.#key,
      query: { uploadId: this.#uploadId },
      headers: { "Content-Type": "application/xml" },
      body: utf8Body(xml),
    });
    // "A 200 OK response can contain either a success or an error" (CompleteMultipartUpload docs).
    const body = await response.text();
    if (hasRoot(body, "Error")) throw await this.#client.error("CompleteMultipartUpload", response, body);
  }

  /**
   * AbortMultipartUpload, best effort (the caller is already failing with a better error). Parts
   * still uploading could outlive an abort, so they are awaited first, as the S3 docs advise.
   */
  async abort(): Promise<void> {
    await Promise.allSettled(this.#inFlight);
    await this.#client
      .send("AbortMultipartUpload", {
        method: "DELETE",
        key: this.#key,
        query: { uploadId: this.#uploadId },
        allow: [404],
      })
      .then((response) => response.body?.cancel())
      .catch(noop);
  }

  async #uploadPart(partNumber: number, bytes: Uint8Array<ArrayBuffer>): Promise<string> {
    // A signed payload hash lets S3 reject a part corrupted in transit (XAmzContentSHA256Mismatch).
    const payloadSha256 = toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
    const response = await this.#client.send("UploadPart", {
      method: "PUT",
      key: this.#key,
      query: { partNumber: String(partNumber), uploadId: this.#uploadId },
      headers: { "X-Amz-Content-Sha256": payloadSha256 },
      body: bytes,
    });
    await response.body?.cancel();
    const etag = response.headers.get("ETag");
    if (!etag) throw new StorageError(DRIVER, "IO", `UploadPart ${partNumber} failed: no ETag in the response`);
    return etag;
  }

  #throwIfFailed(): void {
    if (this.#failure) throw this.#failure.error;
  }
}

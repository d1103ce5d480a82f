/**
 * A minimal S3 REST client: builds path- or virtual-hosted-style URLs, signs with SigV4 (aws4fetch)
 * and sends through an injectable `fetch`, retrying throttling and 5xx answers.
 */
import { AwsClient } from "aws4fetch";
import type { StorageError } from "../../blob-store.js";
import { networkError, readBoundedText, redact, responseError } from "./errors.js";

/** The `fetch` the driver calls: the global one by default; tests and Workers may pass their own. */
/** Temp objects go under `<prefix>.tmp/` (give it a lifecycle rule to sweep a crash's leftovers). */
export const TEMP_PREFIX = ".tmp/";

export type FetchLike = (request: Request) => Promise<Response>;

export interface S3ClientConfig {
  endpoint: URL;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  forcePathStyle: boolean;
  fetch: FetchLike;
  retries: number;
}

export interface S3Call {
  method: "GET" | "HEAD" | "PUT" | "POST" | "DELETE";
  /** Full object key (driver prefix included); omitted for bucket-level calls (ListObjectsV2). */
  key?: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: Uint8Array<ArrayBuffer>;
  /** Non-2xx statuses handed back to the caller instead of thrown (e.g. 404 for GET). */
  allow?: readonly number[];
}

// S3 asks clients to retry 500 InternalError and 503 SlowDown with backoff
// (https://docs.aws.amazon.com/AmazonS3/latest/userguide/optimizing-performance-design-patterns.html).
const RETRYABLE_STATUS = new Set([429, 500, 502, 503, 504]);
const BACKOFF_BASE_MS = 100;
const noop = () => {};

/** Percent-encodes each key segment; `/` stays (S3 object URLs and x-amz-copy-source). */
export const encodeKey = (key: string) => key.split("/").map(encodeURIComponent).join("/");

export class S3Client {
  readonly bucket: string;
  /** The endpoint as shown in messages: scheme, host and path only (no user info is allowed). */
  readonly endpointLabel: string;
  readonly #aws: AwsClient;
  readonly #fetch: FetchLike;
  readonly #secrets: readonly string[];
  readonly #base: URL;
  readonly #pathStyle: boolean;
  readonly #retries: number;

  constructor(config: S3ClientConfig) {
    this.bucket = config.bucket;
    this.#base = new URL(config.endpoint.href.replace(/\/+$/, ""));
    this.endpointLabel = `${this.#base.origin}${this.#base.pathname === "/" ? "" : this.#base.pathname}`;
    this.#aws = new AwsClient({
      accessKeyId: config.accessKeyId,
      secretAccessKey: config.secretAccessKey,
      sessionToken: config.sessionToken,
      service: "s3",
      region: config.region,
      retries: 0, // we retry ourselves, through the injected fetch
    });
    this.#fetch = config.fetch;
    this.#secrets = [config.secretAccessKey, config.sessionToken ?? ""];
    this.#pathStyle = config.forcePathStyle;
    this.#retries = config.retries;
  }

  /** `x-amz-copy-source` value for an object of this bucket (URL-encoded, per the CopyObject docs). */
  copySource(key: string): string {
    return `/${this.bucket}/${encodeKey(key)}`;
  }

  /** The URL of `key` (of the bucket when omitted) with `query`, path-style or virtual-hosted. */
  url(key?: string, query?: Record<string, string>): URL {
    const url = new URL(this.#base.href);
    const basePath = url.pathname === "/" ? "" : url.pathname;
    const objectPath = key === undefined ? "" : `/${encodeKey(key)}`;
    if (this.#pathStyle) {
      url.pathname = `${basePath}/${encodeURIComponent(this.bucket)}${objectPath}`;
    } else {
      url.hostname = `${this.bucket}.${url.hostname}`;
      url.pathname = `${basePath}${objectPath || "/"}`;
    }
    // `?uploads` and friends are valueless sub-resources; `uploads=` is equivalent for S3 and SigV4.
    for (const [name, value] of Object.entries(query ?? {})) url.searchParams.append(name, value);
    return url;
  }

  /**
   * A presigned URL (SigV4 query signing, https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html)
   * for one request on `key`, valid `expiresInSeconds` (1 … 604800). Every header in `headers` is
   * signed, Content-Length included, so the URL only works with exactly those values.
   */
  async presign(
    method: "GET" | "PUT",
    key: string,
    expiresInSeconds: number,
    signed: { headers?: Record<string, string>; query?: Record<string, string> } = {},
  ): Promise<string> {
    const url = this.url(key, { ...signed.query, "X-Amz-Expires": String(expiresInSeconds) });
    const request = await this.#aws.sign(url.href, {
      method,
      headers: signed.headers,
      aws: { signQuery: true, allHeaders: true },
    });
    return request.url;
  }

  /** Sends an already signed request through the driver's fetch (the enforcement probe's PUT). */
  fetchRaw(request: Request): Promise<Response> {
    return this.#fetch(request);
  }

  /**
   * Signs and sends one request, retrying network errors, 429 and 5xx (bodies are always buffered,
   * so every request can be re-sent). Throws StorageError IO for any other non-2xx status not in
   * `call.allow`.
   */
  async send(operation: string, call: S3Call): Promise<Response> {
    const url = this.url(call.key, call.query).href;
    for (let attempt = 0; ; attempt++) {
      // Signed afresh each attempt: the signature covers x-amz-date.
      const request = await this.#aws.sign(url, { method: call.method, headers: call.headers, body: call.body });
      let response: Response;
      try {
        response = await this.#fetch(request);
      } catch (err) {
        if (attempt < this.#retries) {
          await backoff(attempt);
          continue;
        }
        throw networkError(operation, this.endpointLabel, err, this.#secrets);
      }
      if (response.ok || call.allow?.includes(response.status)) return response;
      if (RETRYABLE_STATUS.has(response.status) && attempt < this.#retries) {
        await response.body?.cancel().catch(noop);
        await backoff(attempt);
        continue;
      }
      throw await this.error(operation, response);
    }
  }

  /** Turns an error response (status + XML body) into a StorageError, consuming the body. */
  async error(operation: string, response: Response, body?: string): Promise<StorageError> {
    const text = body ?? (await readBoundedText(response));
    return responseError(operation, response.status, text, this.#secrets);
  }

  /** Redacts this client's secrets from arbitrary text. */
  redact(text: string): string {
    return redact(text, this.#secrets);
  }
}

/** Full-jitter exponential backoff (the AWS SDKs' default strategy). */
function backoff(attempt: number): Promise<void> {
  const ms = Math.random() * BACKOFF_BASE_MS * 2 ** attempt;
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** DeleteObject, ignoring failures: used only to clean up after an error already being thrown. */
export async function deleteQuietly(client: S3Client, key: string): Promise<void> {
  await client
    .send("DeleteObject", { method: "DELETE", key, allow: [404] })
    .then((response) => response.body?.cancel())
    .catch(() => {});
}

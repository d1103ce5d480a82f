/**
 * The contract for fetching a resource's content from its external URI. Implementations enforce
 * the SSRF policy (this folder: guard.ts over ip-address.ts and host-names.ts, used by node-fetch.ts
 * and worker-fetch.ts); the service only sees a stream.
 */

export interface OriginResponse {
  /** The content, streamed. Errors mid-way (timeouts, resets) surface as a `ProblemError` from the stream. */
  body: ReadableStream<Uint8Array>;
  /** The origin's Content-Type, if any (informational: the client's declared media type wins). */
  contentType: string | null;
  /** The origin's declared length, if any. Not trusted for limits: the blob store counts real bytes. */
  contentLength: number | null;
  /**
   * The SHA-256 (hex) the origin's `Repr-Digest` field (RFC 9530) announced, checked against the
   * bytes received; null without a usable one. Parsed here, at the HTTP edge: services get the value.
   */
  reprSha256: string | null;
  /** The final URL after redirects. */
  url: string;
  /** The final status: 2xx, or any status with `anyStatus`. */
  status: number;
}

/** A request with a body instead of the GET (webhook deliveries): sent pinned to the checked address like any hop. */
export interface OriginSend {
  method: "POST";
  headers: Record<string, string>;
  body: Uint8Array<ArrayBuffer>;
}

export interface FetchOriginOptions {
  signal?: AbortSignal;
  send?: OriginSend;
  /** Answer non-2xx statuses too (with their status) instead of throwing ORIGIN_FAILED. */
  anyStatus?: boolean;
}

/**
 * Fetches `url` and resolves once response headers arrived with a 2xx status. Throws `ProblemError`
 * with code ORIGIN_REFUSED (policy), ORIGIN_FAILED (bad status, too many redirects, network error)
 * or ORIGIN_TIMEOUT, each naming the URL as the fetcher's subject says (origin/guard.ts; by default
 * the field `/body/resourceExternalURI`).
 */
export type FetchOrigin = (url: string, options?: FetchOriginOptions) => Promise<OriginResponse>;

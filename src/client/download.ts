/**
 * Downloads with Range resume and SHA-256 verification. The caller keeps the bytes it already has
 * and their running hash; the request asks for the rest with `If-Range: <ETag>`, so content that
 * changed meanwhile comes back whole (200) and the hash starts over. The body stream errors with
 * ChecksumMismatch at its end when the whole content does not hash to the answer's `Repr-Digest`
 * (sha-256, RFC 9530), or, when that has no sha-256 member, to the ETag (the quoted SHA-256).
 */
import { parseSha256Digest } from "../lib/digest-fields.js";
import { Sha256 } from "../lib/sha256.js";
import { ChecksumMismatch, CmsProblem } from "./problem.js";
import type { Progress } from "./upload.js";

export interface DownloadOptions {
  /** Bytes already held (resume); they must have been fed to `hash`. */
  offset?: number;
  /** The running hash of the bytes already held; a fresh one when starting from 0. */
  hash?: Sha256;
  /** The ETag the held bytes came with; required to resume. */
  etag?: string;
  onProgress?: Progress;
  signal?: AbortSignal;
}

export interface Download {
  /** Where `body` starts in the content: the offset asked for, or 0 when the content changed. */
  start: number;
  /** The whole content's size. */
  size: number;
  etag: string;
  /** The SHA-256 the content must hash to (hex). */
  sha256: string;
  mediaType: string;
  body: ReadableStream<Uint8Array>;
}

const totalOf = (res: Response): number => {
  const range = res.headers.get("content-range")?.match(/\/(\d+)$/);
  return Number(range?.[1] ?? res.headers.get("content-length") ?? Number.NaN);
};

/** The SHA-256 (hex) the whole content must hash to: Repr-Digest's, else the ETag's. */
function expectedSha256(res: Response, etag: string): string {
  const digest = parseSha256Digest(res.headers.get("repr-digest"));
  if (digest.kind === "sha256") return digest.hex;
  if (digest.kind === "malformed") throw new TypeError(`malformed Repr-Digest: ${res.headers.get("repr-digest")}`);
  return etag.replace(/^"|"$/g, "");
}

export async function download(
  fetchFn: (req: Request) => Promise<Response>,
  url: string,
  o: DownloadOptions = {},
): Promise<Download> {
  const offset = o.offset ?? 0;
  const headers = new Headers();
  if (offset > 0) {
    if (!o.etag || !o.hash) throw new TypeError("resuming needs the etag and the hash of the bytes already held");
    headers.set("range", `bytes=${offset}-`);
    headers.set("if-range", o.etag);
  }
  const res = await fetchFn(new Request(url, { headers, signal: o.signal }));
  // 416 at offset = size: everything is already here; ask again without Range to verify nothing.
  if (res.status === 416 && offset > 0 && totalOf(res) === offset)
    return download(fetchFn, url, { ...o, offset: 0, hash: undefined });
  if (res.status !== 200 && res.status !== 206) throw await CmsProblem.from(res);
  const etag = res.headers.get("etag") ?? "";
  const sha256 = expectedSha256(res, etag);
  const start = res.status === 206 ? offset : 0;
  const hash = start > 0 && o.hash ? o.hash : new Sha256();
  const size = totalOf(res);
  let received = start;
  const verify = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      hash.update(chunk);
      received += chunk.byteLength;
      o.onProgress?.(received, size);
      controller.enqueue(chunk);
    },
    flush() {
      const actual = hash.hex();
      if (actual !== sha256) throw new ChecksumMismatch(sha256, actual);
    },
  });
  return {
    start,
    size,
    etag,
    sha256,
    mediaType: res.headers.get("content-type") ?? "application/octet-stream",
    body: (res.body ?? new ReadableStream()).pipeThrough(verify),
  };
}

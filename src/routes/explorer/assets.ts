/**
 * Swagger UI's vendor files, read once per process and kept with a strong ETag and, where the
 * runtime does not compress by itself, a gzipped copy: the 1.7 MB bundle then goes out as ~0.4 MB
 * and a revisit costs a 304. A handful of pinned static files: holding them in memory is the point.
 */
import type { Context } from "hono";
import { ifNoneMatchHits } from "../../http/etag.js";
import type { AssetReader } from "../../app-deps.js";
import { toHex } from "../../lib/sha256.js";

export interface VendorAsset {
  bytes: Uint8Array<ArrayBuffer>;
  /** null when the runtime compresses responses itself (Workers). */
  gzip: Uint8Array<ArrayBuffer> | null;
  /** Quoted lowercase hex SHA-256 of `bytes`. */
  etag: string;
}

const bytesOf = async (body: ReadableStream<Uint8Array>) => new Uint8Array(await new Response(body).arrayBuffer());

async function load(read: AssetReader, file: string, compress: boolean): Promise<VendorAsset | null> {
  const body = await read(file);
  if (!body) return null;
  const bytes = await bytesOf(body);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const etag = `"${toHex(digest)}"`;
  const gzip = compress ? await bytesOf(new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip"))) : null;
  return { bytes, gzip, etag };
}

/** The vendor file `file` (already allow-listed by the caller), loaded on first use. */
export function vendorAssets(read: AssetReader, compress: boolean): (file: string) => Promise<VendorAsset | null> {
  const loaded = new Map<string, Promise<VendorAsset | null>>();
  return (file) => {
    let asset = loaded.get(file);
    if (!asset) {
      asset = load(read, file, compress);
      // A failed read is not remembered: the next request tries again.
      asset.catch(() => loaded.delete(file));
      loaded.set(file, asset);
    }
    return asset;
  };
}

/** Whether an Accept-Encoding value accepts gzip (RFC 9110 §12.5.3: listed or `*`, with q > 0). */
export function acceptsGzip(header: string | null | undefined): boolean {
  if (!header) return false;
  let star: boolean | undefined;
  for (const element of header.split(",")) {
    const [coding = "", ...params] = element.split(";").map((part) => part.trim().toLowerCase());
    const q = params.find((p) => p.startsWith("q="));
    const accepted = q === undefined || Number(q.slice(2)) > 0;
    if (coding === "gzip" || coding === "x-gzip") return accepted;
    if (coding === "*") star = accepted;
  }
  return star ?? false;
}

/** Answers a page asset: 304 on a matching If-None-Match, gzip when the client takes it, else the bytes. */
export function sendAsset(c: Context, asset: VendorAsset, type: string, cacheControl: string): Response {
  const headers = { "content-type": type, "cache-control": cacheControl, etag: asset.etag, vary: "accept-encoding" };
  if (ifNoneMatchHits(c.req.header("if-none-match"), asset.etag)) return c.body(null, 304, headers);
  if (asset.gzip && acceptsGzip(c.req.header("accept-encoding"))) {
    return c.body(asset.gzip, 200, { ...headers, "content-encoding": "gzip" });
  }
  return c.body(asset.bytes, 200, headers);
}

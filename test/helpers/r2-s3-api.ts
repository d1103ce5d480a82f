/**
 * R2's S3-compatible API over Miniflare's R2 bucket, on 127.0.0.1:0. Miniflare simulates the R2
 * binding but has no S3 endpoint, and a Worker's presigned URLs (CMS_R2_*) must reach the very bucket
 * its binding reads: so this is the one mocked part, kept to what the Worker sends (presigned PUT and
 * GET, CopyObject, DeleteObject) and strict where R2 is: every SigV4 signature is checked (query and
 * header forms, with aws4fetch re-signing what arrived), presigned URLs expire, `x-amz-meta-*` becomes
 * the object's custom metadata (what the binding's `customMetadata` shows). Whether a wrong signed
 * `x-amz-content-sha256` is refused is a choice (`enforcePayloadHash`), as it differs between engines.
 * Bodies are held in memory: for small test objects only.
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { AwsV4Signer } from "aws4fetch";
import type { Miniflare } from "miniflare";

export const R2_API_ACCESS_KEY_ID = "r2-test-access-key";
export const R2_API_SECRET = "r2-test-secret-access-key";

/** The slice of Miniflare's R2 bucket (from Node) used here; its own types do not resolve outside workerd. */
export interface MiniflareBucket {
  get(
    key: string,
    options?: { range?: { offset: number; length: number } },
  ): Promise<{
    size: number;
    etag: string;
    customMetadata?: Record<string, string>;
    httpMetadata?: Record<string, unknown>;
    arrayBuffer(): Promise<ArrayBuffer>;
  } | null>;
  put(
    key: string,
    value: Uint8Array,
    options?: { customMetadata?: Record<string, string>; httpMetadata?: Record<string, unknown> },
  ): Promise<{ etag: string } | null>;
  delete(key: string): Promise<void>;
  list(options?: { prefix?: string }): Promise<{ objects: { key: string }[] }>;
}

/** `binding` of `mf`, as a MiniflareBucket. */
export const miniflareBucket = async (mf: Miniflare, binding = "BLOBS") =>
  (await mf.getR2Bucket(binding)) as unknown as MiniflareBucket;

export interface R2S3Api {
  /** `http://127.0.0.1:<port>`: CMS_R2_S3_ENDPOINT */
  endpoint: string;
  /** Requests that reached it, as "METHOD /path" (query left off). */
  requests: string[];
  /** Bytes of request bodies it received. */
  bytesIn(): number;
  /** Serves `mf`'s bucket from now on (the Worker needs the endpoint before Miniflare starts). */
  attach(mf: Miniflare): Promise<void>;
  close(): Promise<void>;
}

class S3Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const sha256Hex = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const amzDateMs = (stamp: string) =>
  Date.parse(stamp.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, "$1-$2-$3T$4:$5:$6Z"));

/** The value of each header `names` lists, as the request carried it. */
function signedHeaders(req: IncomingMessage, names: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of names) {
    if (name === "host") continue; // the signer takes it from the URL
    const value = req.headers[name];
    headers[name] = Array.isArray(value) ? value.join(",") : (value ?? "");
  }
  return headers;
}

/** Checks the request's SigV4 signature (query or Authorization form); throws S3Refusal if it is not ours. */
async function verifySignature(req: IncomingMessage, url: URL): Promise<void> {
  const base = { method: req.method ?? "GET", accessKeyId: R2_API_ACCESS_KEY_ID, secretAccessKey: R2_API_SECRET };
  const mismatch = new S3Refusal(403, "SignatureDoesNotMatch", "the signature does not match");
  const query = url.searchParams;
  const presigned = query.get("X-Amz-Signature");
  if (presigned !== null) {
    const [keyId, , region] = (query.get("X-Amz-Credential") ?? "").split("/");
    if (keyId !== R2_API_ACCESS_KEY_ID) throw new S3Refusal(403, "InvalidAccessKeyId", "unknown access key");
    const datetime = query.get("X-Amz-Date") ?? "";
    if (Date.now() > amzDateMs(datetime) + Number(query.get("X-Amz-Expires")) * 1000)
      throw new S3Refusal(403, "AccessDenied", "Request has expired");
    const unsigned = new URL(url);
    unsigned.searchParams.delete("X-Amz-Signature");
    const signer = new AwsV4Signer({
      ...base,
      url: unsigned.href,
      headers: signedHeaders(req, (query.get("X-Amz-SignedHeaders") ?? "").split(";")),
      datetime,
      region,
      service: "s3",
      signQuery: true,
      allHeaders: true,
    });
    if (new URL((await signer.sign()).url).searchParams.get("X-Amz-Signature") !== presigned) throw mismatch;
    return;
  }
  const auth =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/\d{8}\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
      String(req.headers.authorization ?? ""),
    );
  if (!auth) throw new S3Refusal(403, "AccessDenied", "no signature");
  if (auth[1] !== R2_API_ACCESS_KEY_ID) throw new S3Refusal(403, "InvalidAccessKeyId", "unknown access key");
  const signer = new AwsV4Signer({
    ...base,
    url: url.href,
    headers: signedHeaders(req, (auth[3] ?? "").split(";")),
    datetime: String(req.headers["x-amz-date"] ?? ""),
    region: auth[2],
    service: "s3",
    allHeaders: true,
  });
  const expected = /Signature=([0-9a-f]{64})/.exec((await signer.sign()).headers.get("authorization") ?? "")?.[1];
  if (expected !== auth[4]) throw mismatch;
}

async function readBody(req: IncomingMessage): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new Uint8Array(Buffer.concat(chunks));
}

/** `bucket/key` of a path-style URL. */
function target(path: string): { bucket: string; key: string } {
  const [, bucket = "", ...rest] = path.split("/");
  return { bucket, key: decodeURIComponent(rest.join("/")) };
}

export async function startR2S3Api(options: {
  bucketName: string;
  binding?: string;
  enforcePayloadHash: boolean;
}): Promise<R2S3Api> {
  let attached: MiniflareBucket | undefined;
  const requests: string[] = [];
  let bytesIn = 0;

  async function handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    await verifySignature(req, url);
    const bucket = attached;
    if (!bucket) throw new S3Refusal(503, "ServiceUnavailable", "no bucket attached yet");
    const { bucket: name, key } = target(url.pathname);
    if (name !== options.bucketName) throw new S3Refusal(404, "NoSuchBucket", `no bucket ${name}`);
    const body = await readBody(req);
    bytesIn += body.length;
    const payloadHash = String(req.headers["x-amz-content-sha256"] ?? "");
    if (options.enforcePayloadHash && /^[0-9a-f]{64}$/.test(payloadHash) && payloadHash !== sha256Hex(body))
      throw new S3Refusal(400, "XAmzContentSHA256Mismatch", "the payload hash does not match");
    if (req.method === "PUT" && req.headers["x-amz-copy-source"]) {
      const source = target(`/${decodeURIComponent(String(req.headers["x-amz-copy-source"])).replace(/^\//, "")}`);
      const object = await bucket.get(source.key);
      if (!object) throw new S3Refusal(404, "NoSuchKey", "no such source key");
      const copied = await bucket.put(key, new Uint8Array(await object.arrayBuffer()), {
        customMetadata: object.customMetadata,
        httpMetadata: object.httpMetadata,
      });
      res.writeHead(200, { "content-type": "application/xml" });
      res.end(`<CopyObjectResult><ETag>"${copied?.etag}"</ETag></CopyObjectResult>`);
      return;
    }
    if (req.method === "PUT") {
      const customMetadata: Record<string, string> = {};
      for (const [header, value] of Object.entries(req.headers))
        if (header.startsWith("x-amz-meta-")) customMetadata[header.slice("x-amz-meta-".length)] = String(value);
      const put = await bucket.put(key, body, { customMetadata });
      res.writeHead(200, { etag: `"${put?.etag}"` });
      res.end();
      return;
    }
    if (req.method === "DELETE") {
      await bucket.delete(key);
      res.writeHead(204);
      res.end();
      return;
    }
    if (req.method === "GET") {
      const range = /^bytes=(\d+)-(\d+)$/.exec(String(req.headers.range ?? ""));
      const offset = range ? Number(range[1]) : 0;
      const object = await bucket.get(key, range ? { range: { offset, length: Number(range[2]) - offset + 1 } } : {});
      if (!object) throw new S3Refusal(404, "NoSuchKey", "no such key");
      const bytes = new Uint8Array(await object.arrayBuffer());
      const headers: Record<string, string> = { "content-length": String(bytes.length), etag: `"${object.etag}"` };
      for (const [param, header] of [
        ["response-content-type", "content-type"],
        ["response-content-disposition", "content-disposition"],
        ["response-cache-control", "cache-control"],
      ] as const) {
        const value = url.searchParams.get(param);
        if (value !== null) headers[header] = value;
      }
      if (range) headers["content-range"] = `bytes ${offset}-${offset + bytes.length - 1}/${object.size}`;
      res.writeHead(range ? 206 : 200, headers);
      res.end(bytes);
      return;
    }
    throw new S3Refusal(405, "MethodNotAllowed", `${req.method} is not offered here`);
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", `http://${req.headers.host}`);
    requests.push(`${req.method} ${url.pathname}`);
    handle(req, res, url).catch((err: unknown) => {
      req.resume();
      const refusal = err instanceof S3Refusal ? err : new S3Refusal(500, "InternalError", String(err));
      res.writeHead(refusal.status, { "content-type": "application/xml" });
      res.end(`<Error><Code>${refusal.code}</Code><Message>${refusal.message}</Message></Error>`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    bytesIn: () => bytesIn,
    async attach(mf) {
      attached = await miniflareBucket(mf, options.binding);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

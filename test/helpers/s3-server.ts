/**
 * A real S3-compatible server for driver tests: s3rver on 127.0.0.1 (an OS-assigned port) over a
 * temp directory, with three fixes where s3rver 3.7 falls short of S3: AbortMultipartUpload (it
 * answers 405), atomic overwrites (it rewrites object files in place; S3 never shows a partial
 * object) and conditional writes (`If-None-Match: *` on PutObject; it ignores the header).
 */
import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rename, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

/** s3rver's dummy account: the only access key it accepts (it does not verify SigV4 signatures). */
export const S3RVER_ACCESS_KEY_ID = "S3RVER";

/** The settings that point the service at `s3` (or at a proxy in front of it: `endpoint`). */
export const s3Settings = (
  s3: { endpoint: string; bucket: string },
  endpoint = s3.endpoint,
): Record<string, string> => ({
  CMS_STORAGE: "s3",
  CMS_S3_ENDPOINT: endpoint,
  CMS_S3_BUCKET: s3.bucket,
  CMS_S3_ACCESS_KEY_ID: S3RVER_ACCESS_KEY_ID,
  CMS_S3_SECRET_ACCESS_KEY: "S3RVER",
});

/** The slice of s3rver's (untyped, CommonJS) API this helper uses. */
interface KoaContext {
  method: string;
  headers: Record<string, string | string[] | undefined>;
  path: string;
  query: Record<string, string | string[] | undefined>;
  status: number;
  body: unknown;
  type: string;
}
type KoaMiddleware = (ctx: KoaContext, next: () => Promise<void>) => Promise<void>;
/** s3rver's S3Object: only `key` is touched here. */
interface S3rverObject {
  key: string;
}
interface S3rverStore {
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  putObject(object: S3rverObject & { bucket: string }): Promise<unknown>;
  getObject(bucket: string, key: string, options: unknown): Promise<unknown>;
  copyObject(
    srcBucket: string,
    srcKey: string,
    destBucket: string,
    destKey: string,
    metadata: unknown,
  ): Promise<unknown>;
  deleteObject(bucket: string, key: string): Promise<void>;
  getMetadata(bucket: string, key: string): Promise<unknown>;
  putBucket(name: string): Promise<unknown>;
  deleteBucket(name: string): Promise<void>;
  listObjects(bucket: string, options: { prefix?: string }): Promise<{ objects: { key: string }[] }>;
  existsObject(bucket: string, key: string): Promise<boolean>;
}
interface S3rverInstance {
  middleware: KoaMiddleware[];
  store: S3rverStore;
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverConstructor = new (options: {
  address: string;
  port: number;
  directory: string;
  silent: boolean;
  configureBuckets: { name: string }[];
  allowMismatchedSignatures?: boolean;
}) => S3rverInstance;

const S3rver = createRequire(import.meta.url)("s3rver") as S3rverConstructor;

export interface S3TestServer {
  /** `http://127.0.0.1:<port>` */
  endpoint: string;
  /** The bucket created at start-up. */
  bucket: string;
  /** Creates another empty bucket (directly in s3rver's store, no request). */
  createBucket(name: string): Promise<void>;
  deleteBucket(name: string): Promise<void>;
  /** Every object key in a bucket, `.tmp/` included, sorted (straight from s3rver's store). */
  objectKeys(bucket: string): Promise<string[]>;
  /** Multipart uploads started and neither completed nor aborted, as `{ key, uploadId }`. */
  pendingUploads(bucket: string): Promise<{ key: string; uploadId: string }[]>;
  close(): Promise<void>;
}

/** Where s3rver's filesystem store keeps in-progress multipart uploads of a bucket. */
const uploadsDir = (directory: string, bucket: string) => path.join(directory, bucket, "._S3rver_uploads");

/**
 * AbortMultipartUpload (https://docs.aws.amazon.com/AmazonS3/latest/API/API_AbortMultipartUpload.html):
 * `DELETE /<bucket>/<key>?uploadId=<id>` → 204 and the parts are gone, or 404 NoSuchUpload.
 * s3rver routes it to "method not allowed", so uploads could never be freed; this adds it in front.
 */
function abortMultipartShim(directory: string): KoaMiddleware {
  return async (ctx, next) => {
    const uploadId = ctx.query.uploadId;
    if (ctx.method !== "DELETE" || typeof uploadId !== "string") return next();
    const [, bucket, ...keyParts] = ctx.path.split("/");
    const dir = path.join(uploadsDir(directory, bucket ?? ""), path.basename(uploadId));
    const storedKey = await readFile(path.join(dir, "key"), "utf8").catch(() => null);
    if (storedKey === null || storedKey !== decodeURIComponent(keyParts.join("/"))) {
      ctx.status = 404;
      ctx.type = "application/xml";
      ctx.body = "<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>";
      return;
    }
    await rm(dir, { recursive: true, force: true });
    ctx.status = 204;
  };
}

/**
 * Conditional writes (https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html):
 * a PutObject with `If-None-Match: *` answers 412 PreconditionFailed when the key exists, and of
 * racing ones exactly one is written. s3rver ignores the header (it would overwrite); AWS S3, R2
 * and MinIO honour it. This adds it in front, one conditional write per key at a time.
 */
function conditionalPutShim(store: S3rverStore): KoaMiddleware {
  const busy = new Map<string, Promise<void>>();
  return async (ctx, next) => {
    if (ctx.method !== "PUT" || ctx.headers["if-none-match"] !== "*" || ctx.query.uploadId !== undefined) return next();
    const [, bucket = "", ...keyParts] = ctx.path.split("/");
    const key = decodeURIComponent(keyParts.join("/"));
    const id = `${bucket}/${key}`;
    while (busy.has(id)) await busy.get(id);
    let done = () => {};
    busy.set(id, new Promise<void>((resolve) => (done = resolve)));
    try {
      if (await store.existsObject(bucket, key)) {
        ctx.status = 412;
        ctx.type = "application/xml";
        ctx.body =
          "<Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>";
        return;
      }
      await next();
    } finally {
      busy.delete(id);
      done();
    }
  };
}

/** Where staged writes go before being renamed into place; a dot-segment, so never a BlobKey. */
const STAGING = ".s3rver-staging/";
/** The files s3rver keeps per object: content, its MD5 (the ETag) and the metadata JSON. */
const OBJECT_FILES = ["object", "object.md5", "metadata.json"];

/**
 * S3 PutObject/CopyObject/CompleteMultipartUpload replace an object atomically: a reader gets the
 * old or the new object, never a mix (https://docs.aws.amazon.com/AmazonS3/latest/userguide/Welcome.html#ConsistencyModel).
 * s3rver truncates and rewrites the object file in place, so a concurrent GET can see 0 bytes or a
 * torn object. This patch makes its store write a staging object first and rename the three files
 * into place, and makes GET/HEAD read metadata and open the file in one step: both under one lock,
 * so each reader holds one consistent version (an open file keeps its inode across renames).
 */
function makeWritesAtomic(store: S3rverStore): void {
  let tail: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn);
    tail = run.catch(() => {});
    return run;
  };
  const commit = (bucket: string, stagingKey: string, key: string) =>
    exclusive(async () => {
      await mkdir(path.dirname(store.getResourcePath(bucket, key, "object")), { recursive: true });
      for (const file of OBJECT_FILES) {
        await rename(store.getResourcePath(bucket, stagingKey, file), store.getResourcePath(bucket, key, file));
      }
    });
  const { putObject, getObject, copyObject, deleteObject } = store;
  store.putObject = async (object) => {
    const stagingKey = `${STAGING}${randomUUID()}`;
    const staged = Object.assign(Object.create(Object.getPrototypeOf(object) as object) as typeof object, object, {
      key: stagingKey,
    });
    const result = await putObject.call(store, staged);
    await commit(object.bucket, stagingKey, object.key);
    return result;
  };
  store.copyObject = async (srcBucket, srcKey, destBucket, destKey, metadata) => {
    const stagingKey = `${STAGING}${randomUUID()}`;
    await copyObject.call(store, srcBucket, srcKey, destBucket, stagingKey, metadata);
    await commit(destBucket, stagingKey, destKey);
    return store.getMetadata(destBucket, destKey);
  };
  store.getObject = (bucket, key, options) => exclusive(() => getObject.call(store, bucket, key, options));
  store.deleteObject = (bucket, key) => exclusive(() => deleteObject.call(store, bucket, key));
}

export async function startS3Server(): Promise<S3TestServer> {
  const directory = await mkdtemp(path.join(tmpdir(), "s3rver-"));
  const bucket = "blobs";
  const server = new S3rver({
    address: "127.0.0.1",
    port: 0, // s3rver passes it to server.listen, so the OS picks a free port
    directory,
    silent: true,
    configureBuckets: [{ name: bucket }],
  });
  server.middleware.unshift(abortMultipartShim(directory), conditionalPutShim(server.store)); // Koa composes middleware at listen time
  makeWritesAtomic(server.store);
  const address = await server.run();
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    bucket,
    createBucket: async (name) => {
      await server.store.putBucket(name);
    },
    deleteBucket: (name) => server.store.deleteBucket(name),
    objectKeys: async (name) =>
      (await server.store.listObjects(name, {})).objects
        .map((o) => o.key)
        .filter((key) => !key.startsWith(STAGING))
        .sort(),
    pendingUploads: async (name) => {
      const ids = await readdir(uploadsDir(directory, name)).catch(() => [] as string[]);
      return Promise.all(
        ids.map(async (uploadId) => ({
          uploadId,
          key: await readFile(path.join(uploadsDir(directory, name), uploadId, "key"), "utf8"),
        })),
      );
    },
    close: async () => {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

// Presigned URLs on a real S3 that checks signatures: Ceph RGW 16 (test/helpers/rgw.ts). What the
// engine itself refuses on a presigned PUT decides whether the service trusts it or reads the object
// back at completion (docs/direct-storage.md): these tests are that evidence.
import { createHash } from "node:crypto";
import { AwsClient } from "aws4fetch";
import { beforeAll, describe, expect, it } from "vitest";
import type { BlobStore, DirectStorage } from "../../src/storage/blob-store.js";
import { createS3BlobStore } from "../../src/storage/drivers/s3.js";
import { parseBlobKey } from "../../src/storage/keys.js";
import { createRgwBucket, type RgwCluster, rgwObjectKeys, sharedRgw } from "../helpers/rgw.js";

const BUCKET = "presign";
let rgw: RgwCluster;
let store: BlobStore;
let direct: DirectStorage;
beforeAll(async () => {
  rgw = await sharedRgw();
  await createRgwBucket(rgw, BUCKET);
  store = createS3BlobStore({
    endpoint: rgw.endpoint,
    bucket: BUCKET,
    accessKeyId: rgw.accessKeyId,
    secretAccessKey: rgw.secretAccessKey,
    prefix: "p/",
  });
  direct = store.direct as DirectStorage;
}, 180_000);

const bytes = (text: string) => new TextEncoder().encode(text);
const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest();
const put = (url: string, headers: Record<string, string>, body: Uint8Array<ArrayBuffer>) =>
  fetch(url, { method: "PUT", headers, body });

describe("presigned PUT on Ceph RGW", () => {
  it("stores exactly the signed bytes, with the sha256 metadata the driver reads back", async () => {
    const body = bytes("the signed content");
    const key = parseBlobKey("up/exact");
    const signed = await direct.presignPut(key, {
      size: body.length,
      sha256: sha256(body).toString("hex"),
      expiresInSeconds: 60,
    });
    const res = await put(signed.url, signed.headers, body);
    expect(res.status).toBe(200);
    await res.body?.cancel();
    expect(await store.head(key)).toEqual({ size: body.length, sha256: sha256(body).toString("hex") });
  });

  it("refuses other bytes of the same size (XAmzContentSHA256Mismatch) and stores nothing", async () => {
    const signedFor = bytes("the signed content");
    const sent = bytes("THE signed content");
    const key = parseBlobKey("up/wrong-bytes");
    const signed = await direct.presignPut(key, {
      size: signedFor.length,
      sha256: sha256(signedFor).toString("hex"),
      expiresInSeconds: 60,
    });
    const res = await put(signed.url, signed.headers, sent);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("<Code>XAmzContentSHA256Mismatch</Code>");
    expect(await store.head(key)).toBeNull();
    expect(await direct.enforcesSignedSha256()).toBe(true);
  });

  it("refuses a body of another length (Content-Length is signed)", async () => {
    const signedFor = bytes("short");
    const key = parseBlobKey("up/longer");
    const signed = await direct.presignPut(key, {
      size: 5,
      sha256: sha256(signedFor).toString("hex"),
      expiresInSeconds: 60,
    });
    const res = await put(signed.url, signed.headers, bytes("short and then some"));
    expect(res.status).toBe(403);
    await res.body?.cancel();
    expect(await store.head(key)).toBeNull();
  });

  it("refuses the URL once it has expired", async () => {
    const body = bytes("late");
    const key = parseBlobKey("up/late");
    const signed = await direct.presignPut(key, { size: 4, sha256: sha256(body).toString("hex"), expiresInSeconds: 1 });
    // Re-signed with a past X-Amz-Date the server sees as expired (no waiting on the clock).
    const url = new URL(signed.url);
    url.searchParams.set("X-Amz-Date", "20200101T000000Z");
    const res = await put(url.href, signed.headers, body);
    expect(res.status).toBe(403);
    await res.body?.cancel();
    expect(await store.head(key)).toBeNull();
  });

  // Why the driver signs x-amz-content-sha256 and not the newer checksum header: RGW 16 ignores it.
  it("RGW 16 stores a body whose signed x-amz-checksum-sha256 is wrong, but refuses a wrong Content-MD5", async () => {
    const aws = new AwsClient({
      accessKeyId: rgw.accessKeyId,
      secretAccessKey: rgw.secretAccessKey,
      service: "s3",
      region: "us-east-1",
    });
    const signedFor = bytes("checksum of this");
    const sent = bytes("checksum of that");
    const presigned = async (name: string, headers: Record<string, string>) => {
      const url = `${rgw.endpoint}/${BUCKET}/engine/${name}?X-Amz-Expires=60`;
      return (await aws.sign(url, { method: "PUT", headers, aws: { signQuery: true, allHeaders: true } })).url;
    };
    const checksum = { "x-amz-checksum-sha256": sha256(signedFor).toString("base64") };
    const viaChecksum = await put(await presigned("checksum", checksum), checksum, sent);
    expect(viaChecksum.status).toBe(200);
    await viaChecksum.body?.cancel();
    const md5 = { "content-md5": createHash("md5").update(signedFor).digest("base64") };
    const viaMd5 = await put(await presigned("md5", md5), md5, sent);
    expect(viaMd5.status).toBe(400);
    expect(await viaMd5.text()).toContain("<Code>BadDigest</Code>");
    expect(await rgwObjectKeys(rgw, BUCKET, "engine/")).toEqual(["engine/checksum"]);
  });
});

describe("presigned GET on Ceph RGW", () => {
  it("answers with the signed response headers, serves ranges, and copies keep the metadata", async () => {
    const body = bytes("0123456789abcdef");
    const hex = sha256(body).toString("hex");
    const from = parseBlobKey("up/for-get");
    const signed = await direct.presignPut(from, { size: body.length, sha256: hex, expiresInSeconds: 60 });
    await (await put(signed.url, signed.headers, body)).body?.cancel();
    const to = parseBlobKey("t/copied");
    await direct.copy(from, to);
    expect(await store.head(to)).toEqual({ size: body.length, sha256: hex });

    const url = await direct.presignGet(to, 300, {
      contentType: "text/plain; charset=utf-8",
      contentDisposition: 'attachment; filename="a.txt"',
      cacheControl: "private, max-age=0",
    });
    const whole = await fetch(url);
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(whole.headers.get("content-disposition")).toBe('attachment; filename="a.txt"');
    expect(whole.headers.get("cache-control")).toBe("private, max-age=0");
    expect(await whole.text()).toBe("0123456789abcdef");
    const part = await fetch(url, { headers: { Range: "bytes=10-12" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe("bytes 10-12/16");
    expect(await part.text()).toBe("abc");
    // The signature covers the overrides: changing one is refused.
    const tampered = new URL(url);
    tampered.searchParams.set("response-content-type", "text/html");
    const refused = await fetch(tampered);
    expect(refused.status).toBe(403);
    await refused.body?.cancel();
  });
});

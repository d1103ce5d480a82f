// The blob-store conformance suite on a real S3: Ceph RGW 16 on 127.0.0.1 (test/helpers/rgw.ts, one
// cluster per run), which, unlike s3rver, verifies SigV4 signatures and implements multipart, copy
// and conditional writes itself. Each test gets its own prefix in one bucket.
import { beforeAll, describe, expect, it } from "vitest";
import { StorageError } from "../../../src/storage/blob-store.js";
import { createS3BlobStore } from "../../../src/storage/drivers/s3.js";
import { parseBlobKey } from "../../../src/storage/keys.js";
import { createRgwBucket, type RgwCluster, rgwObjectKeys, sharedRgw } from "../../helpers/rgw.js";
import { pattern, streamOf } from "../../helpers/streams.js";
import { describeBlobStore } from "../blob-store.contract.js";

const BUCKET = "conformance";
let rgw: RgwCluster;
beforeAll(async () => {
  rgw = await sharedRgw();
  await createRgwBucket(rgw, BUCKET);
}, 180_000);

let prefixes = 0;
const storeUnder = (prefix: string, secretAccessKey = rgw.secretAccessKey) =>
  createS3BlobStore({
    endpoint: rgw.endpoint,
    bucket: BUCKET,
    accessKeyId: rgw.accessKeyId,
    secretAccessKey,
    prefix,
    partSizeBytes: 5 * 1024 * 1024,
  });

describeBlobStore("s3 on Ceph RGW", async () => ({
  store: storeUnder(`t${++prefixes}/`),
  cleanup: async () => {},
}));

describe("s3 driver on Ceph RGW", () => {
  it("a request signed with the wrong secret is refused (RGW checks SigV4), and says nothing of the secret", async () => {
    const wrong = "not-the-secret-of-this-user-at-all";
    const err = await storeUnder("wrong/", wrong)
      .put(parseBlobKey("k"), streamOf(new TextEncoder().encode("x")))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect((err as StorageError).message).toMatch(/HTTP 403 SignatureDoesNotMatch/);
    expect(String(err)).not.toContain(wrong);
  });

  it("a 12 MiB body goes up as parts and lands as one object, nothing else left in the bucket", async () => {
    const store = storeUnder("multipart/");
    const total = 12 * 1024 * 1024;
    const info = await store.put(parseBlobKey("big.bin"), streamOf(pattern(0, total)));
    expect(info.size).toBe(total);
    expect(await store.head(parseBlobKey("big.bin"))).toEqual(info);
    const part = await store.get(parseBlobKey("big.bin"), { start: total - 10, end: total - 1 });
    expect(new Uint8Array(await new Response(part!.body).arrayBuffer())).toEqual(pattern(total - 10, 10));
    expect(await rgwObjectKeys(rgw, BUCKET, "multipart/")).toEqual(["multipart/big.bin"]);
  });
});

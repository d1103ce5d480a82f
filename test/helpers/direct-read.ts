/**
 * What every direct read (docs/direct-storage.md, CMS_DIRECT_READ_MIN_BYTES) must show: a 307 the
 * caches never keep, to a presigned GET on the bucket at `bucketOrigin` valid ≤ 300 s, on which the
 * bucket answers with the service's own type, disposition and caching (as `head`, the service's HEAD,
 * states them) and exactly `bytes`.
 */
import { expect } from "vitest";

export async function expectDirectRead(
  redirect: Response,
  bucketOrigin: string,
  head: Response,
  bytes: Uint8Array,
): Promise<URL> {
  expect(redirect.status).toBe(307);
  expect(redirect.headers.get("cache-control")).toBe("no-store");
  const target = new URL(redirect.headers.get("location") as string);
  expect(target.origin).toBe(bucketOrigin);
  expect(Number(target.searchParams.get("X-Amz-Expires"))).toBeLessThanOrEqual(300);
  const followed = await fetch(target);
  expect(followed.status).toBe(200);
  for (const name of ["content-type", "content-disposition", "cache-control"])
    expect(followed.headers.get(name), name).toBe(head.headers.get(name));
  expect(new Uint8Array(await followed.arrayBuffer())).toEqual(bytes);
  return target;
}

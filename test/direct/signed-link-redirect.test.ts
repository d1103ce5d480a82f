/**
 * Signed links through a direct read (docs/direct-storage.md, docs/auth.md): with auth on, a signed
 * getData link of content above CMS_DIRECT_READ_MIN_BYTES redirects its holder (who has no token) to
 * the bucket, and the presigned URL expires no later than the link does. Real IdP keys, the real app
 * (in-process) on s3rver over 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AuthStack, bearer, startAuthStack } from "../helpers/auth-stack.js";
import { API, expectProblem } from "../helpers/cms-client.js";
import { fakeClock } from "../helpers/fake-clock.js";
import { type S3TestServer, s3Settings, startS3Server } from "../helpers/s3-server.js";

const MIN = 1000;
// Links count the app's seconds; each test first sets this clock to the real time the signer uses.
const time = fakeClock();
const catchUp = () => time.advance(Date.now() - time.nowMs());
let s3: S3TestServer;
let stack: AuthStack;
let token: string;
beforeAll(async () => {
  s3 = await startS3Server();
  stack = await startAuthStack(
    { ...s3Settings(s3), CMS_DIRECT_READ_MIN_BYTES: String(MIN) },
    { transport: "in-process", clock: time.clock },
  );
  token = await stack.forge({ sub: "linker", resource_access: { "cms-server": { roles: ["admin"] } } });
}, 60_000);
afterAll(async () => {
  await stack?.close();
  await s3?.close();
});

const call = (verb: string, body: unknown) =>
  stack.app.fetch(stack.app.url(`${API}/${verb}`), {
    method: "POST",
    headers: { ...bearer(token), "content-type": "application/json" },
    body: JSON.stringify(body),
  });

/** A resource above MIN of fresh bytes, and those bytes. */
async function created(label: string): Promise<{ resourceURI: string; bytes: Uint8Array }> {
  const bytes = new TextEncoder().encode(`${label} ${crypto.randomUUID()} `.repeat(60));
  expect(bytes.length).toBeGreaterThan(MIN);
  const res = await call("createResource", {
    resourceName: "linked.bin",
    resourceTenantId: "links",
    resourceAuthor: "Linker",
    resourceMediaType: "application/octet-stream",
    resourceBinary: Buffer.from(bytes).toString("base64"),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return { ...((await res.json()) as { resourceURI: string }), bytes };
}

async function linkTo(resourceURI: string, expiresIn: number): Promise<{ url: string; expires: string }> {
  const res = await call("createDataLink", { resourceURI, expiresIn });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as { url: string; expires: string };
}

/** When a presigned URL stops working: its X-Amz-Date plus X-Amz-Expires. */
function presignedUntil(url: URL): number {
  const stamp = url.searchParams.get("X-Amz-Date") ?? "";
  const iso = stamp.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, "$1-$2-$3T$4:$5:$6Z");
  return Date.parse(iso) + Number(url.searchParams.get("X-Amz-Expires")) * 1000;
}

describe("a signed link to content read straight from the bucket", () => {
  it("redirects its holder without a token, to a presigned GET that expires no later than the link", async () => {
    const { resourceURI, bytes } = await created("linked");
    // Without a token or a link, reads are refused: the redirect is the link's doing.
    await expectProblem(await stack.app.fetch(stack.app.url(`${API}/getData/${resourceURI}`)), 401, "UNAUTHENTICATED");

    catchUp();
    const link = await linkTo(resourceURI, 30);
    const res = await stack.app.fetch(link.url, { redirect: "manual" });
    expect(res.status).toBe(307);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const target = new URL(res.headers.get("location") as string);
    expect(target.origin).toBe(s3.endpoint);
    // Nothing of the caller's credentials or the link's signature travels to the bucket.
    expect(target.searchParams.get("signature")).toBeNull();
    expect(target.href).not.toContain(token);
    expect(presignedUntil(target)).toBeLessThanOrEqual(Date.parse(link.expires));
    expect(Number(target.searchParams.get("X-Amz-Expires"))).toBe(29); // a second early: see directRead
    const followed = await fetch(target);
    expect(followed.status).toBe(200);
    expect(followed.headers.get("cache-control")).toBe("private, max-age=30");
    expect(new Uint8Array(await followed.arrayBuffer())).toEqual(bytes);
  });

  it("in a link's last second the service answers itself: no URL would expire before the link", async () => {
    const { resourceURI, bytes } = await created("last");
    catchUp();
    const link = await linkTo(resourceURI, 1);
    const res = await stack.app.fetch(link.url, { redirect: "manual" });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("private, max-age=1");
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes);
  });

  it("a long link still gets a URL of at most 300 s; a tampered link gets no redirect", async () => {
    const { resourceURI } = await created("long");
    const link = await linkTo(resourceURI, 7 * 24 * 3600);
    const res = await stack.app.fetch(link.url, { redirect: "manual" });
    expect(res.status).toBe(307);
    expect(Number(new URL(res.headers.get("location") as string).searchParams.get("X-Amz-Expires"))).toBe(300);
    const tampered = new URL(link.url);
    tampered.searchParams.set("expires", String(Number(tampered.searchParams.get("expires")) + 1));
    await expectProblem(await stack.app.fetch(tampered.href, { redirect: "manual" }), 403, "FORBIDDEN");
  });
});

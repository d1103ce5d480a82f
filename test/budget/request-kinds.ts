/**
 * The request kinds of issue 36's work budget (bench --compare measures the same): each one's
 * resource created over HTTP on a running service, and how one request of it is sent.
 */
import sharp from "sharp";
import type { Origin } from "../helpers/origin.js";

export const KIND_NAMES = ["small", "ranges", "large", "head", "304", "versioned", "derivative", "signed"] as const;
export type KindName = (typeof KIND_NAMES)[number];

export interface Kind {
  name: KindName;
  path: string;
  init: RequestInit;
  /** The status one request answers. */
  status: number;
}

const API = "/cms/v1.0";
/** Past the small-blob cache's entry size (64 KiB): served from the file. */
export const LARGE_SIZE = 2 * 1024 * 1024;

async function createResource(base: string, origin: Origin, name: string, bytes: Uint8Array, type: string) {
  const res = await fetch(`${base}${API}/createResource`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      resourceAuthor: "budget",
      resourceExternalURI: origin.put(name, bytes, type),
      resourceMediaType: type,
      resourceName: name,
      resourceTenantId: "budget",
    }),
  });
  if (res.status !== 201) throw new Error(`createResource ${name}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { resourceURI: string; versionedURI: string };
}

/** Creates the resources on the service at `base` (its origin fetches from `origin`) and returns every kind. */
export async function prepareKinds(base: string, origin: Origin): Promise<Kind[]> {
  const small = await createResource(
    base,
    origin,
    "small.bin",
    new Uint8Array(4096).fill(7),
    "application/octet-stream",
  );
  const large = new Uint8Array(LARGE_SIZE);
  for (let i = 0; i < large.length; i++) large[i] = (i * 31) & 255;
  const big = await createResource(base, origin, "large.bin", large, "application/octet-stream");
  const jpeg = await sharp({ create: { width: 200, height: 150, channels: 3, background: "#3a7" } })
    .jpeg()
    .toBuffer();
  const photo = await createResource(base, origin, "photo.jpg", jpeg, "image/jpeg");
  const smallPath = `${API}/getData/${small.resourceURI}`;
  const etag = (await fetch(`${base}${smallPath}`)).headers.get("etag") ?? "";
  const link = await fetch(`${base}${API}/createDataLink`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ resourceURI: small.resourceURI, expiresIn: 3600 }),
  });
  if (link.status !== 200) throw new Error(`createDataLink: ${link.status} ${await link.text()}`);
  const signed = new URL(((await link.json()) as { url: string }).url);
  const kinds: Kind[] = [
    { name: "small", path: smallPath, init: {}, status: 200 },
    {
      name: "ranges",
      path: `${API}/getData/${big.resourceURI}`,
      init: { headers: { range: "bytes=65536-131071" } },
      status: 206,
    },
    { name: "large", path: `${API}/getData/${big.resourceURI}`, init: {}, status: 200 },
    { name: "head", path: smallPath, init: { method: "HEAD" }, status: 200 },
    { name: "304", path: smallPath, init: { headers: { "if-none-match": etag } }, status: 304 },
    { name: "versioned", path: `${API}/getData/${small.versionedURI}`, init: {}, status: 200 },
    {
      name: "derivative",
      path: `${API}/getData/${photo.resourceURI}?width=64&format=webp`,
      init: {},
      status: 200,
    },
    { name: "signed", path: `${signed.pathname}${signed.search}`, init: {}, status: 200 },
  ];
  // Every kind once before any is counted: what loads lazily (sharp and libvips with their threads,
  // for the first image) and the derivative's making happen here, not inside some kind's batch.
  for (const kind of kinds) await sendOne(base, kind);
  return kinds;
}

/** Sends one request of `kind` to `base`, reads its body whole and checks its status. */
export async function sendOne(base: string, kind: Kind): Promise<void> {
  const res = await fetch(`${base}${kind.path}`, kind.init);
  await res.arrayBuffer();
  if (res.status !== kind.status) throw new Error(`${kind.name}: ${res.status}, expected ${kind.status}`);
}

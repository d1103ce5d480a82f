/**
 * The preview of a resource, always loaded from the content answers themselves (getData, which
 * serves stored bytes with their sandboxing CSP), never from a copy the page made: with auth on
 * through a short signed link (elements cannot send a bearer token), else by its getData path.
 * An image the server can transform is shown as its display-size derivative (`?preset=`, which a
 * signed link's holder may add), not the original, which may be many megabytes.
 */
import type { Api } from "./api.js";
import { el } from "./dom.js";
import { essenceOf } from "./format.js";
import type { Resource } from "./types.js";

const PREVIEW_SECONDS = 600;

/** A signed getData link (createDataLink) that needs no token until it expires. */
export async function signedLink(api: Api, resource: Resource, expiresIn: number): Promise<string> {
  const link = await api.call(api.client.signedLink(resource.resourceURI, expiresIn));
  return link.url;
}

/** A URL of the content an element may load without a token: signed only when a token is needed. */
export const contentUrl = (api: Api, resource: Resource): Promise<string> =>
  api.signedIn
    ? signedLink(api, resource, PREVIEW_SECONDS)
    : Promise.resolve(`${api.prefix}/getData/${resource.resourceURI.split("/").map(encodeURIComponent).join("/")}`);

export type PreviewKind = "image" | "video" | "audio" | "pdf" | "text" | null;

// The types getData renders inline (src/http/content-policy.ts); others would only download.
const IMAGES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp", "image/apng"]);
// What getData's image parameters transform (images/derivatives.ts); a GIF keeps its animation as the original.
const TRANSFORMABLE = new Set(["image/png", "image/jpeg", "image/webp", "image/avif"]);
const TEXTS = new Set(["text/plain", "text/csv", "text/markdown", "text/css", "text/vtt", "application/json"]);

export function previewKind(mediaType: string): PreviewKind {
  const type = essenceOf(mediaType);
  if (IMAGES.has(type)) return "image";
  if (type.startsWith("video/")) return "video";
  if (type.startsWith("audio/")) return "audio";
  if (type === "application/pdf") return "pdf";
  return TEXTS.has(type) ? "text" : null;
}

/** `url` with the preset's derivative asked for (a signed link keeps its signature: presets are not signed). */
export function withPreset(url: string, preset: string): string {
  const target = new URL(url, location.href);
  target.searchParams.set("preset", preset);
  return url.startsWith("/") ? `${target.pathname}${target.search}` : target.href;
}

/** An image as shown (preview and thumbnail): the preset's derivative where the server can make one, else the original. */
export async function imageUrl(api: Api, resource: Resource, previewPreset: string | null): Promise<string> {
  const src = await contentUrl(api, resource);
  const derivative = previewPreset && TRANSFORMABLE.has(essenceOf(resource.mediaType));
  return derivative ? withPreset(src, previewPreset) : src;
}

/** `previewPreset`: the display-size image preset, or null when the server cannot transform images. */
export async function renderPreview(
  api: Api,
  resource: Resource,
  name: string,
  previewPreset: string | null,
): Promise<Node> {
  const kind = previewKind(resource.mediaType);
  if (!kind) return el("p", {}, `No preview for ${resource.mediaType}.`);
  if (kind === "image")
    return el("img", { src: await imageUrl(api, resource, previewPreset), alt: `Preview of ${name}` });
  const src = await contentUrl(api, resource);
  switch (kind) {
    case "video":
      // preload=metadata: the browser fetches ranges as the user seeks, never the whole file up front.
      return el("video", { src, controls: true, preload: "metadata", "aria-label": `Preview of ${name}` });
    case "audio":
      return el("audio", { src, controls: true, preload: "metadata", "aria-label": `Preview of ${name}` });
    case "pdf":
      // No sandbox attribute: Chromium's PDF viewer does not run in a sandboxed frame (the answer's CSP still forbids script).
      return el("iframe", { src, title: `Preview of ${name}` });
    case "text":
      // Served with a `sandbox` CSP anyway; the frame's own sandbox is a second fence.
      return el("iframe", { src, title: `Preview of ${name}`, sandbox: "" });
  }
}

/**
 * The thumbnail grid, the list's other view: an image as the `preview` preset's derivative (a signed
 * link with auth on), its ThumbHash placeholder painted first (decoded here, in the browser, from the
 * resource's `thumbhash`) and replaced once the derivative has loaded; anything else as an icon of
 * its media type. Every stored string goes in as text or an attribute value, never as markup.
 */
import { thumbHashToDataURL } from "thumbhash";
import type { Api } from "./api.js";
import { el } from "./dom.js";
import { essenceOf } from "./format.js";
import { imageUrl, previewKind } from "./preview.js";
import type { Resource } from "./types.js";

/** The placeholder of a base64 ThumbHash as a PNG data URL, or null when it does not decode. */
export function placeholderUrl(thumbhash: string): string | null {
  try {
    return thumbHashToDataURL(Uint8Array.from(atob(thumbhash), (c) => c.charCodeAt(0)));
  } catch {
    return null; // a damaged hash: no placeholder, the image still loads
  }
}

/** A short label for a media type's icon: PDF, TXT, VIDEO… */
export function typeLabel(mediaType: string): string {
  const type = essenceOf(mediaType);
  const kind = previewKind(type);
  if (kind === "pdf") return "PDF";
  if (kind === "video" || kind === "audio" || kind === "image") return kind.toUpperCase();
  if (type.startsWith("text/")) return "TXT";
  if (type === "application/zip") return "ZIP";
  return (type.split("/")[1] ?? "FILE").slice(0, 6).toUpperCase();
}

/** The thumbnail's image: the placeholder at once (data-state=placeholder), the derivative once decoded (loaded). */
function thumbnailImage(api: Api, resource: Resource, preset: string | null): HTMLImageElement {
  const placeholder = resource.thumbhash ? placeholderUrl(resource.thumbhash) : null;
  const img = el("img", { alt: "", "data-state": placeholder ? "placeholder" : "loading" });
  if (placeholder) {
    img.src = placeholder;
    img.className = "placeholder";
  }
  void imageUrl(api, resource, preset)
    .then(async (url) => {
      const real = new Image();
      real.src = url;
      await real.decode();
      img.src = url;
      img.className = "";
      img.dataset.state = "loaded";
    })
    .catch(() => {
      img.dataset.state = "failed"; // the placeholder (if any) stays; the details still show the preview
    });
  return img;
}

export interface CardContext {
  api: Api;
  preset: string | null;
  open(resource: Resource): void;
  /** The selection checkbox of this resource (shared with the table's). */
  checkbox(resource: Resource): HTMLInputElement;
  name(resource: Resource): string;
}

export function card(resource: Resource, context: CardContext): HTMLLIElement {
  const name = context.name(resource);
  const picture =
    previewKind(resource.mediaType) === "image"
      ? thumbnailImage(context.api, resource, context.preset)
      : el("span", { class: "type-icon", "aria-hidden": "true" }, typeLabel(resource.mediaType));
  const open = el(
    "button",
    { type: "button", class: "thumb", "data-uid": resource.resourceUID, "aria-label": `Open ${name}` },
    picture,
  );
  open.addEventListener("click", () => context.open(resource));
  const caption = el("span", { class: "name" }, resource.title ?? name);
  return el(
    "li",
    { "data-uid": resource.resourceUID },
    open,
    el("span", { class: "check" }, context.checkbox(resource), caption),
  );
}

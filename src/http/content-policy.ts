/**
 * How user content may be shown, decided in one place for every path that serves stored bytes.
 * Stored content is hostile: it must never run script in the API/explorer origin, where the
 * explorer keeps the user's token. Like raw.githubusercontent.com, every answer carries a
 * `sandbox` CSP (the document gets an opaque origin, so no storage, cookies or DOM of ours) —
 * except PDFs, whose viewers a sandbox or `default-src 'none'` breaks in some browsers (Directus
 * learned it in Safari); a declared PDF is never rendered as HTML anyway, since nosniff is on
 * every answer. CSP only governs documents: images, media, fonts, CSS and scripts fetched as
 * subresources by other pages ignore it, so ordinary content keeps working.
 */
import type { DispositionType } from "./content-disposition.js";
import { DEFAULT_MEDIA_TYPE } from "../lib/media-types.js";

/**
 * - `inline`: rendered by the browser as passive content (images, media, text, PDF…).
 * - `active`: can run script (HTML, SVG, XML): inline, sandboxed; a package's files may run their
 *   scripts, still in an opaque origin; others never run any.
 * - `attachment`: anything else is downloaded, never rendered.
 */
export type Treatment = "inline" | "active" | "attachment";

const INLINE = [
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
  "image/avif",
  "image/bmp",
  "image/apng",
  "image/vnd.microsoft.icon",
  "image/x-icon",
  "text/plain",
  "text/css",
  "text/csv",
  "text/vtt",
  "text/markdown",
  "text/javascript",
  "application/javascript",
  "application/json",
  "application/wasm",
  "application/pdf",
  "application/vnd.ms-fontobject",
];
const ACTIVE = [
  "text/html",
  "application/xhtml+xml",
  "image/svg+xml",
  "text/xml",
  "application/xml",
  "text/xsl",
  "application/xslt+xml",
];
const INLINE_FAMILIES = ["audio/", "video/", "font/"];

/** The one table: media type essence → treatment. Unlisted types are attachments. */
export const TREATMENTS: ReadonlyMap<string, Treatment> = new Map([
  ...INLINE.map((type) => [type, "inline"] as const),
  ...ACTIVE.map((type) => [type, "active"] as const),
]);

// RFC 9110 §8.3.1 media-type: a browser given anything looser (e.g. a comma list, where Fetch's
// "extract a MIME type" takes the last entry) might not see the type we classified.
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const QUOTED = '"(?:[\\t\\x20\\x21\\x23-\\x5b\\x5d-\\x7e]|\\\\[\\t\\x20-\\x7e])*"';
const MEDIA_TYPE = new RegExp(`^(${TOKEN})/(${TOKEN})(?:[ \\t]*;[ \\t]*${TOKEN}=(?:${TOKEN}|${QUOTED}))*$`);

/** The lowercase `type/subtype` of a well-formed media type, or undefined. */
function essenceOf(mediaType: string): string | undefined {
  const match = MEDIA_TYPE.exec(mediaType.trim());
  return match ? `${match[1]}/${match[2]}`.toLowerCase() : undefined;
}

export function treatmentOf(mediaType: string): Treatment {
  const essence = essenceOf(mediaType);
  if (!essence) return "attachment";
  const listed = TREATMENTS.get(essence);
  if (listed) return listed;
  if (essence.endsWith("+xml")) return "active"; // RSS, Atom, MathML…: XML documents can carry script
  return INLINE_FAMILIES.some((family) => essence.startsWith(family)) ? "inline" : "attachment";
}

/** Nothing runs, nothing is fetched but our own images, media and styles: GitHub's raw policy, a little wider. */
const INERT =
  "sandbox; default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'self' 'unsafe-inline'; font-src 'self'";
/**
 * A package page (e-learning) runs its own scripts and loads its relative files, in an opaque
 * origin: no `allow-same-origin`, so it can read nothing of the API's origin.
 */
const PACKAGE_PAGE =
  "sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads; default-src 'self' data: blob: 'unsafe-inline' 'unsafe-eval'; base-uri 'self'";
/** Viewers break under a sandbox; script is still refused to the document itself. */
const PDF = "script-src 'none'";

export interface ContentPolicy {
  treatment: Treatment;
  disposition: DispositionType;
  /** The Content-Security-Policy header value. */
  csp: string;
  /** The Content-Type to send: the declared one, unless malformed. */
  contentType: string;
}

export interface PolicyInput {
  mediaType: string;
  /** A file of a zip package (a row with a parent): its active content may run its own scripts. */
  packageFile: boolean;
  /** True when a separate content origin is configured and this request did not come to it. */
  apiOriginOnly: boolean;
}

/** The disposition, CSP and Content-Type for serving content of `mediaType`. */
export function contentPolicy({ mediaType, packageFile, apiOriginOnly }: PolicyInput): ContentPolicy {
  const essence = essenceOf(mediaType);
  const contentType = essence ? mediaType : DEFAULT_MEDIA_TYPE;
  const treatment = treatmentOf(mediaType);
  if (treatment === "attachment" || (treatment === "active" && apiOriginOnly)) {
    return { treatment, disposition: "attachment", csp: INERT, contentType };
  }
  if (treatment === "active")
    return { treatment, disposition: "inline", csp: packageFile ? PACKAGE_PAGE : INERT, contentType };
  return { treatment, disposition: "inline", csp: essence === "application/pdf" ? PDF : INERT, contentType };
}

/**
 * Media types by file extension, for files extracted from a zip package (and `cms put`'s guess, which the
 * server checks against the bytes). Only what e-learning packages carry; anything else is application/octet-stream.
 */
const BY_EXTENSION: Record<string, string> = {
  html: "text/html",
  htm: "text/html",
  xhtml: "application/xhtml+xml",
  css: "text/css",
  js: "text/javascript",
  mjs: "text/javascript",
  json: "application/json",
  xml: "application/xml",
  xsd: "application/xml",
  txt: "text/plain",
  csv: "text/csv",
  md: "text/markdown",
  svg: "image/svg+xml",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  avif: "image/avif",
  ico: "image/vnd.microsoft.icon",
  bmp: "image/bmp",
  mp3: "audio/mpeg",
  wav: "audio/wav",
  ogg: "audio/ogg",
  oga: "audio/ogg",
  m4a: "audio/mp4",
  mp4: "video/mp4",
  m4v: "video/mp4",
  webm: "video/webm",
  ogv: "video/ogg",
  vtt: "text/vtt",
  pdf: "application/pdf",
  zip: "application/zip",
  woff: "font/woff",
  woff2: "font/woff2",
  ttf: "font/ttf",
  otf: "font/otf",
  eot: "application/vnd.ms-fontobject",
  swf: "application/x-shockwave-flash",
  wasm: "application/wasm",
};

export const DEFAULT_MEDIA_TYPE = "application/octet-stream";

/** RFC 6838 §4.2 restricted-name: what a type and a subtype may be made of. */
export const RESTRICTED_NAME = "[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}";
const ESSENCE = new RegExp(`^${RESTRICTED_NAME}/${RESTRICTED_NAME}$`);

/**
 * A Content-Type's type/subtype in lower case, its parameters dropped (another party's parameters are
 * not ours to store); undefined when it is no valid media type.
 */
export function mediaTypeEssence(contentType: string | null | undefined): string | undefined {
  const essence = contentType?.split(";")[0]?.trim().toLowerCase();
  return essence && ESSENCE.test(essence) ? essence : undefined;
}

export function mediaTypeForPath(path: string): string {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const dot = name.lastIndexOf(".");
  if (dot <= 0) return DEFAULT_MEDIA_TYPE;
  const extension = name.slice(dot + 1).toLowerCase();
  // Own entries only: the name is the uploader's, and `x.constructor` must not find Object.prototype's.
  return Object.hasOwn(BY_EXTENSION, extension) ? (BY_EXTENSION[extension] as string) : DEFAULT_MEDIA_TYPE;
}

/**
 * A resource is exploded as a package when its declared type ends with "zip" (application/zip,
 * multipart/x-zip); Windows' application/x-zip-compressed, which does not, is accepted too.
 */
export const isZipMediaType = (mediaType: string): boolean => {
  const essence = mediaType.split(";")[0]?.trim().toLowerCase() ?? "";
  return essence.endsWith("zip") || essence === "application/x-zip-compressed";
};

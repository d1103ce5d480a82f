/**
 * getData's query as delivery reads it, parsed once per request: `v` (a versioned URL, issue 28)
 * and the image transform (issue 30). One parser of the parameters (`versionParam`, the image
 * service's `requested`) for the route and the runtimes' fast paths; the fast paths only split the
 * raw text first (`fastQuery`), and a row they hand to the app carries this parse along
 * (handed-over-row.ts), so a miss parses nothing twice.
 */
import type { ResponseHeaders } from "../http/answer-blob.js";
import type { ImageDerivatives } from "../images/derivatives.js";
import { IMAGE_QUERY, type ImageAsker, type ImageRequest } from "../images/params.js";
import { ProblemError } from "../problems.js";
import { VERSION_PATTERN } from "../services/revisions.js";

/** What a getData asks of its content beside the row: both undefined for a plain getData. */
export interface DeliveryQuery {
  /** `v` as sent (a VERSION_PATTERN); undefined: the mutable URL. */
  readonly version: string | undefined;
  /** The image transform; undefined: none asked, or no image service (the parameters are then ignored). */
  readonly image: ImageRequest | undefined;
  /**
   * A signed link's Cache-Control, over the URL's own (signed-read.ts, on the fast paths; the route
   * takes its link's from the guard).
   */
  readonly cache?: ResponseHeaders;
}

/** A query's parameter by name; undefined when absent. */
export type QueryLookup = (name: string) => string | undefined;

/** No query: the row's own content. */
export const PLAIN_QUERY: DeliveryQuery = Object.freeze({ version: undefined, image: undefined });

/** `v` of a versioned URL (undefined: a mutable URL); a 400 naming it when malformed. */
export function versionParam(query: QueryLookup): string | undefined {
  const version = query("v");
  if (version === undefined || VERSION_PATTERN.test(version)) return version;
  const detail = "must be the content's SHA-256 in hex, or a prefix of it of at least 16 digits";
  throw new ProblemError("VALIDATION_FAILED", `invalid query: v ${detail}`, {
    errors: [{ pointer: "/query/v", detail }],
  });
}

/** The transform `query` asks for (undefined: none, or no image service); a 400 naming an invalid parameter. */
export const imageParam = (
  images: ImageDerivatives | undefined,
  query: QueryLookup,
  asker?: ImageAsker,
): ImageRequest | undefined => images?.requested(query, asker) ?? undefined;

const IMAGE_NAMES: ReadonlySet<string> = new Set(IMAGE_QUERY);

/**
 * `text` (the query after `?`) as a parameter lookup when a runtime may answer it: a `v` alone, or
 * image parameters only, each once, with nothing Hono would decode (`%`, `+`); else null.
 */
export function fastParams(text: string): QueryLookup | null {
  if (text === "" || text.includes("%") || text.includes("+")) return null;
  const params = new Map<string, string>();
  for (const pair of text.split("&")) {
    const at = pair.indexOf("=");
    const name = at < 0 ? pair : pair.slice(0, at);
    // `v` alone, or image parameters alone: a versioned derivative is the app's (a revision's read).
    const allowed = name === "v" ? params.size === 0 : IMAGE_NAMES.has(name) && !params.has("v");
    if (!allowed || params.has(name)) return null;
    params.set(name, at < 0 ? "" : pair.slice(at + 1));
  }
  return (name) => params.get(name);
}

/** `text`'s parse for a fast path, or null: the app answers (another name, an escape, an invalid value, its 400). */
function parseFast(images: ImageDerivatives | undefined, text: string): DeliveryQuery | null {
  const params = fastParams(text);
  if (!params) return null;
  try {
    const version = versionParam(params);
    if (version !== undefined) return Object.freeze({ version, image: undefined });
    // Image parameters without an image service: the app ignores them (its plain answer).
    const image = imageParam(images, params);
    return image ? Object.freeze({ version: undefined, image: Object.freeze(image) }) : null;
  } catch {
    return null;
  }
}

/** Query texts whose parse is remembered, per image service; more: all forgotten, parsed again. */
const PARSED = 256;
/** A longer query text is parsed each time: the memory held stays small whatever clients send. */
const PARSED_TEXT = 128;
/** Per image service (its settings are fixed; NO_IMAGES without one), each query text's parse. */
const parsedBy = new WeakMap<object, Map<string, DeliveryQuery | null>>();
const NO_IMAGES = {};

/**
 * The parse of a fast path's query text (after `?`; undefined: none), once per exact text: a repeat
 * request splits and validates nothing, and its transform is the same object each time
 * (images/derivatives.ts finds its place by it). Null: the app answers.
 */
export function fastQuery(images: ImageDerivatives | undefined, text: string | undefined): DeliveryQuery | null {
  if (text === undefined) return PLAIN_QUERY;
  const key = images ?? NO_IMAGES;
  let parsed = parsedBy.get(key);
  if (!parsed) parsedBy.set(key, (parsed = new Map()));
  let query = parsed.get(text);
  if (query !== undefined) return query;
  query = parseFast(images, text);
  if (text.length <= PARSED_TEXT) {
    if (parsed.size >= PARSED) parsed.clear();
    parsed.set(text, query);
  }
  return query;
}

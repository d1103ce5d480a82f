/**
 * A getData with image parameters (issue 30) that the runtimes' fast paths may answer: only a
 * derivative already stored, found as the app finds it (images/derivatives.ts `stored`, the same
 * parameters, presets and `format=auto`), under the same header fields as the route's answer. Not
 * yet made, invalid parameters (the app's 400), any other query name: null, the app answers.
 */
import { CONTENT_VARY } from "../http/cache-policy.js";
import type { ResponseHeaders } from "../http/answer-blob.js";
import type { Derivative, ImageDerivatives } from "../images/derivatives.js";
import { IMAGE_QUERY, type ImageRequest } from "../images/params.js";
import type { ContentFacts } from "../metadata/content-facts.js";

const NAMES: ReadonlySet<string> = new Set(IMAGE_QUERY);

/** `query` (after `?`) as a parameter lookup when it names image parameters only, each once; else null. */
export function imageQuery(query: string): ((name: string) => string | undefined) | null {
  if (query === "" || query.includes("%") || query.includes("+")) return null;
  const params = new Map<string, string>();
  for (const pair of query.split("&")) {
    const at = pair.indexOf("=");
    const name = at < 0 ? pair : pair.slice(0, at);
    if (!NAMES.has(name) || params.has(name)) return null;
    params.set(name, at < 0 ? "" : pair.slice(at + 1));
  }
  return (name) => params.get(name);
}

/** The header fields a derivative's answer adds over its content's (the route's too). */
export const derivativePolicy = (made: Derivative): ResponseHeaders | undefined =>
  made.variesOnAccept ? VARIES_ON_ACCEPT : undefined;
const VARIES_ON_ACCEPT: ResponseHeaders = Object.freeze({ vary: `${CONTENT_VARY}, Accept` });

export interface StoredDerivative {
  facts: ContentFacts;
  policy: ResponseHeaders | undefined;
}

const withPolicy = (made: Derivative | null): StoredDerivative | null =>
  made && { facts: made.facts, policy: derivativePolicy(made) };

type Stored = StoredDerivative | null | Promise<StoredDerivative | null>;

/** `query`'s transform, or null: the app answers (its 400, with its problem details). */
function requested(images: ImageDerivatives, query: (name: string) => string | undefined): ImageRequest | null {
  try {
    return images.requested(query);
  } catch {
    return null;
  }
}

function storedFor(
  images: ImageDerivatives,
  source: ContentFacts,
  request: ImageRequest | null,
  accept: string,
): Stored {
  const made = request && images.stored(source, request, accept);
  return made instanceof Promise ? made.then(withPolicy) : withPolicy(made);
}

/** Query texts whose transform is remembered, per image service; more: all forgotten, parsed again. */
const PARSED = 256;
/** A longer query text is parsed each time: the memory held stays small whatever clients send. */
const PARSED_TEXT = 128;
/** Per image service (its settings are fixed), each query text's transform; null: the app's. */
const parsedBy = new WeakMap<ImageDerivatives, Map<string, ImageRequest | null>>();

/**
 * `query`'s (the text after `?`) transform, parsed once per exact text: a repeat request splits
 * and validates nothing, and the object is the same each time (images/derivatives.ts finds its
 * place by it). Null: not image parameters only, or invalid (the app answers, its 400).
 */
function requestOf(images: ImageDerivatives, query: string): ImageRequest | null {
  let parsed = parsedBy.get(images);
  if (!parsed) parsedBy.set(images, (parsed = new Map()));
  let request = parsed.get(query);
  if (request !== undefined) return request;
  const params = imageQuery(query);
  request = params && requested(images, params);
  if (request) Object.freeze(request); // shared by every request of this text
  if (query.length <= PARSED_TEXT) {
    if (parsed.size >= PARSED) parsed.clear();
    parsed.set(query, request);
  }
  return request;
}

/**
 * `source`'s stored derivative for the raw query text (after `?`) and `accept`, with its header
 * fields; null: the app answers. The parse is remembered (`requestOf`); in this call (no promise)
 * when this process knows the derivative is stored (images/derivatives.ts).
 */
export function storedDerivativeOf(
  images: ImageDerivatives | undefined,
  source: ContentFacts,
  query: string,
  accept: string,
): Stored {
  return images ? storedFor(images, source, requestOf(images, query), accept) : null;
}

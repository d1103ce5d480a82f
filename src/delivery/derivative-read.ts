/**
 * A getData with image parameters (issue 30) that the runtimes' fast paths may answer: only a
 * derivative already stored, found as the app finds it (images/derivatives.ts `stored`, the same
 * parameters, presets and `format=auto`), under the same header fields as the route's answer. Not
 * yet made, or a store fault while looking: null, the app answers (core.ts).
 */
import type { Derivative, ImageDerivatives } from "../images/derivatives.js";
import type { ImageRequest } from "../images/params.js";
import type { ContentFacts } from "../metadata/content-facts.js";
import type { ResponseHeaders } from "../http/answer-blob.js";
import { CONTENT_VARY } from "../http/cache-policy.js";

/** The header fields a derivative's answer adds over its content's (the route's too). */
export const derivativePolicy = (made: Derivative): ResponseHeaders | undefined =>
  made.variesOnAccept ? VARIES_ON_ACCEPT : undefined;
const VARIES_ON_ACCEPT: ResponseHeaders = Object.freeze({ vary: `${CONTENT_VARY}, Accept` });

/**
 * `source`'s derivative for `request` and `accept` when it is stored; null: the app answers. In
 * this call (no promise) when this process knows it is stored (images/derivatives.ts).
 */
export function storedDerivative(
  images: ImageDerivatives,
  source: ContentFacts,
  request: ImageRequest,
  accept: string,
): Derivative | null | Promise<Derivative | null> {
  const made = images.stored(source, request, accept);
  return made instanceof Promise ? made.catch(() => null) : made;
}

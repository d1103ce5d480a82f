/**
 * getData's image derivatives (issue 30), runtime-free: from a source row and a normalised request
 * to the row of a derivative stored in the blob store, which the content core then answers like any
 * content (its own strong ETag, 304, Range, HEAD, Repr-Digest). Derivatives are a cache beside the
 * content: keyed by the source blob (tenant + SHA-256) and the normalised parameters, under `img/`
 * (outside the collector's and the quotas' `t/`), bounded by CMS_IMAGE_CACHE_BYTES, removed with
 * their source (derivative-keys.ts, services/content.ts collect).
 */
import { LRUCache } from "lru-cache";
import type { ContentFacts } from "../metadata/content-facts.js";
import { type ImageTransformOutcome, type Metrics, noopMetrics } from "../metrics/metrics.js";
import { ImageError, imageErrorIn } from "./errors.js";
import type { BlobInfo, BlobKey, BlobStore } from "../storage/blob-store.js";
import { parseBlobKey } from "../storage/keys.js";
import type { DerivativeIndex } from "./derivative-index.js";
import { derivativePrefix } from "./derivative-keys.js";
import { createWorkLimit } from "./limit.js";
import {
  derivativeName,
  FORMAT_MEDIA_TYPES,
  type ImageRequest,
  type ImageSettings,
  type ImageAsker,
  type OutputFormat,
  outputFormat,
  outputPixels,
  parseImageQuery,
} from "./params.js";
import type { ImageHeader, ImageSource, ImageTransformer } from "./transformer.js";

export interface DerivativeSettings extends ImageSettings {
  /** 0: the number of cores. */
  concurrency: number;
  cacheBytes: number;
  /** CMS_IMAGE_TIMEOUT_SECONDS: a transform's time limit, waiting for a slot included (limit.ts). */
  timeoutSeconds?: number;
  /** CMS_IMAGE_MAX_PIXELS: bounds the output too (an `enlarge`d one); none: unbounded here. */
  maxPixels?: number;
}

export const DEFAULT_DERIVATIVE_SETTINGS: DerivativeSettings = {
  presets: {},
  presetsOnly: false,
  maxDimension: 6000,
  concurrency: 0,
  cacheBytes: 1024 ** 3,
};

/** Media types decoded for derivatives; anything else (SVG above all: active content) is refused unread. */
export const RASTER: Readonly<Record<string, string>> = {
  "image/jpeg": "jpeg",
  "image/png": "png",
  "image/webp": "webp",
  "image/avif": "avif",
  "image/gif": "gif",
  "image/tiff": "tiff",
};

export interface Derivative {
  facts: ContentFacts;
  /** `format=auto`: the answer depends on Accept. */
  variesOnAccept: boolean;
}

export interface ImageDerivatives {
  /** The transform the query asks for, or null (plain getData). 400 naming a bad parameter (403: a link's holder's). */
  requested(query: (name: string) => string | undefined, asker?: ImageAsker): ImageRequest | null;
  /**
   * The derivative of `source` for `request`, made (once) and stored. 422/501/503 as problems.
   * `caller` (a user, a signed link): who waits for a transform slot, for a fair share (limit.ts).
   */
  derive(source: ContentFacts, request: ImageRequest, accept: string, caller?: string): Promise<Derivative>;
  /**
   * The derivative `derive` would answer when it is already stored; else null (nothing is made).
   * One this process found or stored before comes from memory (derivative-index.ts `known`), in
   * this call: no I/O, no promise (the fast paths answer it as they answer a cached plain getData).
   */
  stored(source: ContentFacts, request: ImageRequest, accept: string): Derivative | null | Promise<Derivative | null>;
  /** A read of `stored`'s derivative found its blob gone or changed: it is looked up afresh next time. */
  missing(derivative: ContentFacts): void;
}

export function createImageDerivatives({
  blobs,
  transformer,
  settings = DEFAULT_DERIVATIVE_SETTINGS,
  index,
  metrics = noopMetrics,
}: {
  blobs: BlobStore;
  transformer: ImageTransformer | undefined;
  settings?: DerivativeSettings;
  /** Records uses and keeps the cache under CMS_IMAGE_CACHE_BYTES (derivative-index.ts); none: unbounded. */
  index?: DerivativeIndex;
  /** Where transforms (outcome, seconds) and stored-derivative lookups (hit or miss) are counted. */
  metrics?: Pick<Metrics, "imageTransform" | "imageCacheLookup">;
}): ImageDerivatives {
  // navigator.hardwareConcurrency: Node 21+, Bun and Workers; Node 20 has none (the host passes its cores).
  const { navigator } = globalThis as { navigator?: { hardwareConcurrency?: number } };
  const cores = navigator?.hardwareConcurrency ?? 1;
  const slots = settings.concurrency > 0 ? settings.concurrency : Math.max(1, cores);
  const limit = createWorkLimit(slots, slots * 4, (settings.timeoutSeconds ?? Number.POSITIVE_INFINITY) * 1000);

  const sourceOf = async (source: ContentFacts): Promise<ImageSource> => {
    // A local file libvips reads (header first, then sequentially), or a copy of its bytes; else the stream.
    const file = await blobs.localFile?.(source.blobKey as BlobKey);
    if (file && file.size === source.size) return file;
    const read = async () => {
      const blob = await blobs.get(source.blobKey as BlobKey);
      if (!blob) throw new Error(`blob ${source.blobKey} is missing`);
      return blob.body;
    };
    return { stream: await read(), size: source.size, reopen: read };
  };

  // libvips checks sharp's timeout only while it evaluates pixels: an AVIF encode ran 7–14 s past a
  // 1 s limit. So the limit is also a wall-clock deadline on the output, which aborts its stream
  // (the put stores nothing) and answers 503; the slot stays taken until libvips stops (limit.ts).
  const deadlineMs = (settings.timeoutSeconds ?? Number.POSITIVE_INFINITY) * 1000;
  const overTime = () =>
    new ImageError("IMAGE_BUSY", `the image transform took longer than ${settings.timeoutSeconds} s`, {
      retryAfterSeconds: 5,
    });

  // A source the transformer refused (too large, lying, corrupt) is refused from memory next time,
  // by its content (the blob key: tenant and SHA-256), whatever the parameters: a repeat of a 1 KB
  // AVIF that cost 1.2 s and 622 MiB each time now costs a lookup.
  const refused = new LRUCache<string, ImageError>({ max: REFUSALS });
  // Refusals of one request's output, not of its source: never remembered for the source.
  const outputRefusals = new WeakSet<ImageError>();

  /** The output's bound (an `enlarge`d one: the source's own is within the limit already). */
  const boundedOutput = (request: ImageRequest, header: ImageHeader) => {
    const max = settings.maxPixels;
    if (max === undefined || outputPixels(request, header) <= max) return;
    const detail = `would make a derivative of more than ${max} pixels (CMS_IMAGE_MAX_PIXELS)`;
    const names = (["width", "height"] as const).filter((name) => request[name] !== undefined);
    const problem = new ImageError("IMAGE_TOO_LARGE", `${names.join(" and ")} with enlarge=true ${detail}`, {
      field: { pointer: `/query/${names[0] ?? "width"}`, detail },
    });
    outputRefusals.add(problem);
    throw problem;
  };

  const make = async (
    source: ContentFacts,
    request: ImageRequest,
    key: BlobKey,
    format: OutputFormat,
    caller?: string,
  ) =>
    limit.run(
      async (hold) => {
        const deadline = new AbortController();
        const timer = Number.isFinite(deadlineMs)
          ? setTimeout(() => deadline.abort(overTime()), deadlineMs)
          : undefined;
        const formatFor = (header: ImageHeader) => {
          boundedOutput(request, header);
          return format;
        };
        try {
          const made = await transformer!.transform(await sourceOf(source), request, formatFor);
          // Past the deadline the answer is a 503 at once, but libvips may encode on: its slot waits for it.
          if (made.finished) hold(made.finished);
          deadline.signal.throwIfAborted();
          const body = made.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>(), {
            signal: deadline.signal,
          });
          // A cache's write: not flushed before the answer (durable: false, blob-store.ts); a crash's
          // leftovers are never served (the store checks them) and are made again here.
          return await blobs.put(key, body, { durable: false });
        } catch (err) {
          if (deadline.signal.aborted) throw deadline.signal.reason;
          const refusal = imageErrorIn(err);
          if (refusal && SOURCE_REFUSALS.has(refusal.code) && !outputRefusals.has(refusal))
            refused.set(source.blobKey, refusal);
          throw refusal ?? err;
        } finally {
          clearTimeout(timer);
        }
      },
      { tenant: tenantOf(source.blobKey), caller },
    );

  // Requests for a derivative being made wait for that make: a new image on a busy page is
  // transformed and recorded once, in one transform slot, not once per asker (16 at once with one
  // slot: 11 were refused 503 past the queue). A failure is shared, then forgotten: the next tries again.
  const making = new Map<BlobKey, Promise<BlobInfo>>();
  const makeOnce = (
    source: ContentFacts,
    request: ImageRequest,
    key: BlobKey,
    format: OutputFormat,
    caller?: string,
  ) => {
    let made = making.get(key);
    if (!made) {
      const started = performance.now();
      const took = () => (performance.now() - started) / 1000;
      made = make(source, request, key, format, caller)
        .then(
          (info) => {
            metrics.imageTransform("made", took());
            return info;
          },
          (err: unknown) => {
            metrics.imageTransform(transformOutcomeOf(err), took());
            throw err;
          },
        )
        .then((info) => {
          index?.remember(key, info);
          index?.used(key, info.size, true);
          return info;
        })
        .finally(() => making.delete(key));
      making.set(key, made);
    }
    return made;
  };

  // Per source row, each derivative's key and the facts answered for it: the same object while its
  // blob holds the same bytes, so the content core builds its plain head once (http/plain-heads.ts,
  // by facts object) and a repeat request builds no key. Rows are never changed in place (a
  // changed row is a new object), and the WeakMap lets a row's entries go with it.
  const bySource = new WeakMap<ContentFacts, Map<string, Place>>();
  // And by request object when Accept cannot change it (not `auto`): the fast paths' requests are
  // the same object per query text (delivery/derivative-read.ts), so a repeat one
  // resolves no format and builds no name. Weak both ways: entries go with the row or the request.
  const byRequest = new WeakMap<ContentFacts, WeakMap<ImageRequest, Place>>();

  /** Where `source`'s derivative for `request` and `accept` lies; 501/422 as problems. */
  const locate = (source: ContentFacts, request: ImageRequest, accept: string): Place => {
    if (request.format === "auto") return place(source, request, accept);
    let places = byRequest.get(source);
    if (!places) byRequest.set(source, (places = new WeakMap()));
    let found = places.get(request);
    if (!found) places.set(request, (found = place(source, request, accept)));
    return found;
  };

  const place = (source: ContentFacts, request: ImageRequest, accept: string): Place => {
    if (!transformer) {
      throw new ImageError("TRANSFORM_UNAVAILABLE", "image parameters are not available on this runtime");
    }
    const sourceFormat = RASTER[source.mediaType.split(";")[0]!.trim().toLowerCase()];
    if (!sourceFormat) {
      throw new ImageError("NOT_TRANSFORMABLE", `${source.mediaType} is not a raster image this service transforms`);
    }
    const format = outputFormat(request, accept, sourceFormat);
    const name = derivativeName(request, format);
    let places = bySource.get(source);
    if (!places) bySource.set(source, (places = new Map()));
    let place = places.get(name);
    if (!place) {
      const prefix = derivativePrefix(source.blobKey);
      if (!prefix) throw new Error(`blob key ${source.blobKey} is not a content key`);
      if (places.size >= PLACES_PER_SOURCE) places.clear();
      place = { key: parseBlobKey(prefix + name), format, facts: undefined };
      places.set(name, place);
    }
    return place;
  };

  const derivative = (source: ContentFacts, request: ImageRequest, place: Place, info: BlobInfo): Derivative => {
    const { facts } = place;
    if (!facts || facts.size !== info.size || facts.sha256 !== info.sha256) {
      place.facts = derivativeFacts(source, place.key, place.format, info);
    }
    return { facts: place.facts!, variesOnAccept: request.format === "auto" };
  };

  return {
    requested: (query, asker) => parseImageQuery(query, settings, asker),

    async derive(source, request, accept, caller) {
      const refusal = refused.get(source.blobKey);
      if (refusal) throw refusal;
      const place = locate(source, request, accept);
      const { key, format } = place;
      // Always asked: a request comes here when the fast path's memory was wrong (missing). A file
      // that cannot be read as a blob (a crash left it empty) is made again: the put replaces it.
      const found = await blobs.head(key).catch(() => null);
      metrics.imageCacheLookup(found !== null);
      if (found) {
        index?.remember(key, found);
        index?.used(key, found.size, false);
      }
      const info = found ?? (await makeOnce(source, request, key, format, caller));
      return derivative(source, request, place, info);
    },

    stored(source, request, accept) {
      if (!transformer) return null; // the app answers 501
      let place: Place;
      try {
        place = locate(source, request, accept);
      } catch {
        return null; // not a raster image: the app answers the problem
      }
      const { key } = place;
      const answer = (info: BlobInfo) => {
        // Only hits count here: a miss goes on to `derive`, which counts it.
        metrics.imageCacheLookup(true);
        index?.used(key, info.size, false);
        return derivative(source, request, place, info);
      };
      const known = index?.known(key);
      if (known) return answer(known);
      // A file that cannot be read as a blob: not known as stored; the app's derive makes it again.
      return blobs.head(key).then(
        (found) => {
          if (!found) return null;
          index?.remember(key, found);
          return answer(found);
        },
        () => null,
      );
    },

    missing(facts) {
      index?.gone(facts.blobKey as BlobKey);
    },
  };
}

/** A derivative of one source row: its key, format, and the facts last answered for it. */
interface Place {
  key: BlobKey;
  format: OutputFormat;
  facts: ContentFacts | undefined;
}

/** The tenant segment of a content blob key (`t/<tenant>/…`): whose transform slots' share it is. */
const tenantOf = (blobKey: string) => blobKey.split("/", 2)[1];

/** How a transform that threw ended, for cms_image_transforms_total. */
function transformOutcomeOf(err: unknown): ImageTransformOutcome {
  const code = err instanceof ImageError ? err.code : undefined;
  if (code === "IMAGE_BUSY") return "busy";
  return code === "NOT_TRANSFORMABLE" || code === "IMAGE_TOO_LARGE" ? "refused" : "failed";
}

/** What a source's content earns whatever the parameters (422s), so it is remembered for that source. */
const SOURCE_REFUSALS: ReadonlySet<string> = new Set(["NOT_TRANSFORMABLE", "IMAGE_TOO_LARGE"]);

/** Sources whose refusal is remembered (≈ 300 B each), least recently refused dropped first. */
const REFUSALS = 10_000;

/** Derivatives' places kept per source row (more: the row's are dropped and built again). */
const PLACES_PER_SOURCE = 64;

/** The derivative's own content facts: named after its source, typed by its format. */
function derivativeFacts(source: ContentFacts, key: BlobKey, format: OutputFormat, info: BlobInfo): ContentFacts {
  const stem = source.name.replace(/\.[A-Za-z0-9]{1,5}$/, "");
  return {
    blobKey: key,
    size: info.size,
    sha256: info.sha256,
    mediaType: FORMAT_MEDIA_TYPES[format],
    name: `${stem}.${format === "jpeg" ? "jpg" : format}`,
    updatedAt: source.updatedAt,
  };
}

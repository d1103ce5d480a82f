/**
 * getData's image parameters (issue 30): parsed and bounded here, pure and runtime-free, so every
 * refusal is a 400 naming the parameter before any byte of the source is read.
 */
import { z } from "zod";
import { ImageError } from "./errors.js";

export const FITS = ["cover", "contain", "inside", "outside", "fill"] as const;
export const FORMATS = ["auto", "webp", "avif", "jpeg", "png"] as const;
/** What a derivative is encoded as once `auto` is resolved. */
export type OutputFormat = Exclude<(typeof FORMATS)[number], "auto">;

/** One preset of CMS_IMAGE_PRESETS, or the explicit parameters of a request. */
export const ImageParamsSchema = z
  .object({
    width: z.number().int().min(1),
    height: z.number().int().min(1),
    fit: z.enum(FITS),
    format: z.enum(FORMATS),
    quality: z.number().int().min(1).max(100),
    /** Let the derivative outgrow its source (default: never past the source's own size). */
    enlarge: z.boolean(),
  })
  .partial()
  .strict();
export type ImageParams = z.infer<typeof ImageParamsSchema>;

export const ImagePresetsSchema = z.record(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/), ImageParamsSchema);
export type ImagePresets = z.infer<typeof ImagePresetsSchema>;

/** The preset the media library's previews load: a display-size derivative, never the original. */
export const PREVIEW_PRESET = "preview";

/**
 * Presets every server has; CMS_IMAGE_PRESETS adds to them and may redefine them. WebP: fast to
 * encode and shown by every current browser (AVIF costs several times the CPU for a preview).
 */
export const BUILT_IN_PRESETS: ImagePresets = {
  [PREVIEW_PRESET]: { width: 1024, height: 1024, fit: "inside", format: "webp" },
};

export interface ImageSettings {
  presets: ImagePresets;
  /** CMS_IMAGE_PRESETS_ONLY: only `?preset=` is accepted (bounds the work a public deployment does). */
  presetsOnly: boolean;
  /** CMS_IMAGE_MAX_DIMENSION: the largest output width or height. */
  maxDimension: number;
}

/** A request's transform, normalised: both-or-one dimension, a fit, a (possibly `auto`) format. */
export interface ImageRequest {
  width?: number;
  height?: number;
  fit: (typeof FITS)[number];
  format: (typeof FORMATS)[number];
  quality?: number;
  /** `enlarge=true`: may outgrow the source (else it never does, as imgproxy and Directus default). */
  enlarge?: true;
}

/** The query names this module reads; any of them present makes the request a transform. */
export const IMAGE_QUERY = ["width", "height", "fit", "format", "quality", "enlarge", "preset"] as const;
const EXPLICIT = ["width", "height", "fit", "format", "quality", "enlarge"] as const;

/** Who asks: a signed link's holder may name presets only (the link does not sign other parameters). */
export interface ImageAsker {
  linkHolder?: boolean;
}

const refuse = (name: string, detail: string): never => {
  throw new ImageError("IMAGE_PARAM_INVALID", `invalid query: ${name} ${detail}`, {
    field: { pointer: `/query/${name}`, detail },
  });
};

function dimension(name: string, raw: string, max: number): number {
  const value = /^[0-9]{1,9}$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= 1 && value <= max)) refuse(name, `must be an integer from 1 to ${max}`);
  return value;
}

function oneOf<T extends string>(name: string, raw: string, values: readonly T[]): T {
  if (!(values as readonly string[]).includes(raw)) refuse(name, `must be one of ${values.join(", ")}`);
  return raw as T;
}

/**
 * The transform `query` asks for, or null when it names none (plain getData). `query(name)` is the
 * parameter's value, undefined when absent. Throws IMAGE_PARAM_INVALID (a 400) naming the parameter.
 */
export function parseImageQuery(
  query: (name: string) => string | undefined,
  settings: ImageSettings,
  asker: ImageAsker = {},
): ImageRequest | null {
  if (!IMAGE_QUERY.some((name) => query(name) !== undefined)) return null;
  const explicit: ImageParams = {};
  for (const name of EXPLICIT) {
    const raw = query(name);
    if (raw === undefined) continue;
    // A link's holder is anyone it reaches: left to choose sizes, five requests filled every slot.
    if (asker.linkHolder) linkRefuses(name);
    if (settings.presetsOnly) refuse(name, "is not accepted here: only preset= is (CMS_IMAGE_PRESETS_ONLY)");
    if (name === "width" || name === "height") explicit[name] = dimension(name, raw, settings.maxDimension);
    else if (name === "quality") explicit.quality = dimension(name, raw, 100);
    else if (name === "fit") explicit.fit = oneOf(name, raw, FITS);
    else if (name === "enlarge") explicit.enlarge = oneOf(name, raw, ["true", "false"] as const) === "true";
    else explicit.format = oneOf(name, raw, FORMATS);
  }
  const presetName = query("preset");
  let preset: ImageParams = {};
  if (presetName !== undefined) {
    const found = Object.hasOwn(settings.presets, presetName) ? settings.presets[presetName] : undefined;
    if (!found) {
      const names = Object.keys(settings.presets);
      refuse("preset", names.length ? `must be one of ${names.join(", ")}` : "names no preset (none configured)");
    }
    preset = found!;
  }
  const merged = { ...preset, ...explicit };
  for (const name of ["width", "height"] as const) {
    const value = merged[name];
    if (value !== undefined && value > settings.maxDimension) {
      refuse(name, `must be an integer from 1 to ${settings.maxDimension}`);
    }
  }
  // Both dimensions and no fit: cover (Directus' default); one alone keeps the aspect ratio.
  const fit = merged.fit ?? (merged.width && merged.height ? "cover" : "inside");
  const request: ImageRequest = {
    width: merged.width,
    height: merged.height,
    fit,
    format: merged.format ?? "auto",
    quality: merged.quality,
  };
  if (merged.enlarge) request.enlarge = true;
  return request;
}

const linkRefuses = (name: string): never => {
  const detail = "is not accepted on a signed link: only preset= is";
  throw new ImageError("IMAGE_PARAM_FORBIDDEN", `${name} ${detail}`, { field: { pointer: `/query/${name}`, detail } });
};

/** The media type of each output format, and which `auto` prefers (AVIF, then WebP). */
export const FORMAT_MEDIA_TYPES: Record<OutputFormat, string> = {
  avif: "image/avif",
  webp: "image/webp",
  jpeg: "image/jpeg",
  png: "image/png",
};

/**
 * The q-value `accept` gives `type` (exact type only: `image/*` proves nothing), 0 when it names
 * it not or refuses it (q=0); a malformed q counts as refusal. The first naming it counts.
 */
function quality(accept: string, type: string): number {
  for (const part of accept.split(",")) {
    const [name, ...params] = part.split(";").map((s) => s.trim().toLowerCase());
    if (name !== type) continue;
    const q = params.find((p) => p.replace(/\s+/g, "").startsWith("q="));
    if (q === undefined) return 1;
    const value = q.replace(/\s+/g, "").slice(2);
    return /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(value) ? Number(value) : 0;
  }
  return 0;
}

/**
 * The format a derivative is encoded in: `auto` picks AVIF or WebP from Accept, else the source's
 * own (when it is one we write; else JPEG). The answer then varies on Accept.
 */
export function outputFormat(request: ImageRequest, accept: string, sourceFormat: string | undefined): OutputFormat {
  if (request.format !== "auto") return request.format;
  // The client's preference by q-value (RFC 9110 §12.5.1); a tie goes to AVIF, the smaller.
  const avif = quality(accept, "image/avif");
  const webp = quality(accept, "image/webp");
  if (avif > 0 && avif >= webp) return "avif";
  if (webp > 0) return "webp";
  if (sourceFormat === "png" || sourceFormat === "webp" || sourceFormat === "avif") return sourceFormat;
  return sourceFormat === "gif" ? "png" : "jpeg";
}

/** A stable storage-key segment for a transform in `format` (same parameters → same key). */
export function derivativeName(request: ImageRequest, format: OutputFormat): string {
  const w = request.width ?? 0;
  const h = request.height ?? 0;
  // `-up` only when enlarging: the default's keys stay those stored before `enlarge` existed.
  return `w${w}-h${h}-${request.fit}-q${request.quality ?? 0}${request.enlarge ? "-up" : ""}.${format}`;
}

/**
 * The pixels a derivative of a `source`-sized image would have, at most. Without `enlarge` it never
 * outgrows its source (sharp's withoutEnlargement), which is within CMS_IMAGE_MAX_PIXELS already;
 * with it, `width`/`height`/`fit` decide, either way round (EXIF orientation may swap the source's).
 */
export function outputPixels(request: ImageRequest, source: { width: number; height: number }): number {
  const { width: w0, height: h0 } = source;
  if (!request.enlarge) return w0 * h0;
  const sized = (sw: number, sh: number) => {
    const { width: w, height: h, fit } = request;
    if (w && h && (fit === "fill" || fit === "cover" || fit === "contain")) return w * h;
    const scales = [w && w / sw, h && h / sh].filter((s): s is number => !!s);
    const scale = fit === "outside" ? Math.max(...scales) : Math.min(...scales);
    return Math.max(1, Math.round(sw * scale)) * Math.max(1, Math.round(sh * scale));
  };
  return Math.max(sized(w0, h0), sized(h0, w0));
}

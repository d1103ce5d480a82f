/**
 * Finds an e-learning package's start page, as sastix/cms clients expect: root `info.json`
 * (`startpage`, then `startPage`), else the launch resource of a root SCORM `imsmanifest.xml`.
 */
import { scormLaunch } from "./scorm-manifest.js";
import { quoteName, ZipError } from "../zip/errors.js";
import type { ZipArchive, ZipEntry } from "../zip/reader.js";

export const INFO_JSON = "info.json";
export const SCORM_MANIFEST = "imsmanifest.xml";
/** Both metadata files are read whole into memory, so they are capped (real ones are a few KiB). */
export const MAX_METADATA_BYTES = 1024 * 1024;

const fail = (detail: string) => new ZipError("start-page", detail);

async function readText(archive: ZipArchive, entry: ZipEntry): Promise<string> {
  if (entry.uncompressedSize > MAX_METADATA_BYTES)
    throw fail(`${entry.path} is larger than ${MAX_METADATA_BYTES} bytes`);
  // The entry stream enforces the declared size, so this buffer cannot outgrow the cap.
  const bytes = new Uint8Array(await new Response(archive.open(entry)).arrayBuffer());
  // Manifests written by Windows tools are sometimes UTF-16; the byte order mark tells.
  const bom = ((bytes[0] ?? 0) << 8) | (bytes[1] ?? 0);
  const encoding = bom === 0xfffe ? "utf-16le" : bom === 0xfeff ? "utf-16be" : "utf-8";
  return new TextDecoder(encoding).decode(bytes);
}

/** Reference → entry path candidates: the literal value first, then as a URL reference against the `xml:base` chain. */
function candidates(reference: string, bases: string[]): string[] {
  const out = bases.length === 0 ? [reference] : [];
  try {
    // A throwaway origin lets the WHATWG URL parser do the RFC 3986 work: resolving xml:base,
    // dropping ?query and #fragment, removing dot segments. The package sits one level down, so
    // a reference that climbs out of it (`../x`) or is absolute (`/x`, `https:`) lands outside.
    const root = new URL("http://package.invalid/package/");
    const url = [...bases, reference].reduce((base, ref) => new URL(ref, base), root);
    if (url.origin === root.origin && url.pathname.startsWith(root.pathname)) {
      const encoded = url.pathname.slice(root.pathname.length);
      try {
        out.push(decodeURIComponent(encoded));
      } catch {
        // A literal "%" in a file name: the undecoded form below is the best guess.
      }
      out.push(encoded);
    }
  } catch {
    // Not a URL reference at all; only the literal form can match.
  }
  return out;
}

/** The path of the file entry `reference` names, compared after NFC normalisation, or undefined. */
function resolve(files: Map<string, ZipEntry>, reference: string, bases: string[] = []): string | undefined {
  for (const candidate of candidates(reference, bases)) {
    const entry = files.get(candidate.normalize("NFC"));
    if (entry) return entry.path;
  }
  return undefined;
}

/** The start page from info.json, or undefined when it names none (then SCORM gets a chance). */
async function fromInfoJson(
  archive: ZipArchive,
  entry: ZipEntry,
  files: Map<string, ZipEntry>,
): Promise<string | undefined> {
  let info: unknown;
  try {
    info = JSON.parse(await readText(archive, entry));
  } catch (err) {
    if (err instanceof ZipError) throw err;
    throw fail(`${INFO_JSON} is not valid JSON`);
  }
  if (typeof info !== "object" || info === null || Array.isArray(info)) throw fail(`${INFO_JSON} is not a JSON object`);
  const record = info as Record<string, unknown>;
  const value = record["startpage"] ?? record["startPage"];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || value.trim() === "")
    throw fail(`${INFO_JSON} start page must be a non-empty string`);
  const path = resolve(files, value.trim());
  if (path === undefined) throw fail(`${INFO_JSON} start page ${quoteName(value)} is not a file in the zip`);
  return path;
}

async function fromManifest(archive: ZipArchive, entry: ZipEntry, files: Map<string, ZipEntry>): Promise<string> {
  const launch = scormLaunch(await readText(archive, entry));
  if (!launch) throw fail(`${SCORM_MANIFEST} names no resource with an href`);
  const path = resolve(files, launch.href, launch.bases);
  if (path === undefined)
    throw fail(`${SCORM_MANIFEST} launch resource ${quoteName(launch.href)} is not a file in the zip`);
  return path;
}

/**
 * The path of the package's start page, always an existing file entry of `archive`. Throws a 400
 * `ZipError` (reason "start-page") when no start page can be found or it is not in the zip.
 */
export async function findStartPage(archive: ZipArchive): Promise<string> {
  const files = new Map<string, ZipEntry>();
  for (const entry of archive.entries) if (!entry.isDirectory) files.set(entry.path.normalize("NFC"), entry);
  const info = files.get(INFO_JSON);
  const manifest = files.get(SCORM_MANIFEST);
  const fromInfo = info && (await fromInfoJson(archive, info, files));
  if (fromInfo !== undefined) return fromInfo;
  if (manifest) return fromManifest(archive, manifest, files);
  throw fail(
    info
      ? `${INFO_JSON} has no "startpage" or "startPage" and the zip has no ${SCORM_MANIFEST}`
      : `zip has no ${INFO_JSON} start page or ${SCORM_MANIFEST}`,
  );
}

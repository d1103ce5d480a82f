/**
 * Header fields of the tus 1.0 resumable upload protocol (https://tus.io/protocols/resumable-upload):
 * parsing Upload-Metadata, Upload-Checksum and the integer fields, and the server's capability fields.
 */
import { ProblemError } from "../problems.js";
import { decodeBase64, isBase64 } from "../lib/base64.js";

export const TUS_VERSION = "1.0.0";
export const TUS_EXTENSIONS = "creation,creation-with-upload,termination,expiration,checksum";
export const TUS_CHECKSUM_ALGORITHMS = "sha256";
/** The only body type a PATCH (or a POST with an upload) may carry. */
export const TUS_CONTENT_TYPE = "application/offset+octet-stream";

const headerProblem = (header: string, detail: string, code: "VALIDATION_FAILED" = "VALIDATION_FAILED") =>
  new ProblemError(code, `invalid ${header}: ${detail}`, { errors: [{ pointer: `/header/${header}`, detail }] });

/** A non-negative integer header; undefined when absent. */
export function integerHeader(header: string, value: string | null | undefined): number | undefined {
  if (value == null) return undefined;
  if (!/^\d{1,16}$/.test(value.trim()) || !Number.isSafeInteger(Number(value)))
    throw headerProblem(header, "must be a non-negative integer");
  return Number(value);
}

/**
 * `key base64value` pairs separated by commas; a key without a value means "" (tus §Upload-Metadata).
 * Keys are unique ASCII tokens; values are base64 of UTF-8 text here (we only take text fields).
 * A Map, not an object: keys are the client's, and `toString` or `__proto__` is a key like any other.
 */
export function parseUploadMetadata(value: string | null | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (value == null || value.trim() === "") return out;
  for (const pair of value.split(",")) {
    const [key, encoded = "", ...rest] = pair.trim().split(" ");
    if (!key || !/^[\x21-\x7e]+$/.test(key) || rest.length > 0)
      throw headerProblem("upload-metadata", "must be comma-separated `key base64value` pairs");
    if (out.has(key)) throw headerProblem("upload-metadata", `key ${key} is given twice`);
    if (!isBase64(encoded)) throw headerProblem("upload-metadata", `the value of ${key} is not base64`);
    try {
      out.set(key, new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(decodeBase64(encoded)));
    } catch {
      throw headerProblem("upload-metadata", `the value of ${key} is not UTF-8 text`);
    }
  }
  return out;
}

/** `Upload-Checksum: sha256 <base64 of 32 bytes>`; other algorithms are refused (400) as the extension says. */
export function parseUploadChecksum(value: string | null | undefined): Uint8Array | undefined {
  if (value == null) return undefined;
  const [algorithm, encoded = "", ...rest] = value.trim().split(" ");
  if (algorithm !== "sha256" || rest.length > 0)
    throw headerProblem("upload-checksum", `supported: ${TUS_CHECKSUM_ALGORITHMS}`);
  const digest = isBase64(encoded) ? decodeBase64(encoded) : undefined;
  if (digest?.byteLength !== 32) throw headerProblem("upload-checksum", "must be the base64 of a 32-byte SHA-256");
  return digest;
}

/**
 * Where new content comes from: an external URI (downloaded under the SSRF policy), inline base64
 * bytes from the JSON body (small, capped), or a streamed multipart upload (large files).
 */
import { ProblemError } from "../problems.js";
import { decodeBase64, decodedLength } from "../lib/base64.js";

/** A SHA-256 (hex) the content must hash to, and the request field or header that announced it. */
export interface ExpectedDigest {
  sha256: string;
  pointer: string;
}

/**
 * `pointer` names the request field that problems with this content should point at; `digest`, when
 * given, must match the bytes received or nothing is stored (422 DIGEST_MISMATCH). A stream's
 * `mediaType` is the type its uploader sent with it (a multipart part's Content-Type, tus `filetype`),
 * usually a guess from the file's name: without a declared type it is checked against the bytes, and
 * a zip type asks for a package (the uploader's own word, unlike an origin's).
 */
export type ContentSource = (
  | { kind: "uri"; uri: string }
  | { kind: "bytes"; bytes: Uint8Array<ArrayBuffer>; pointer: string }
  | { kind: "stream"; body: ReadableStream<Uint8Array>; pointer: string; mediaType?: string }
) & { digest?: ExpectedDigest };

export const EXPECTED_SHA256_POINTER = "/body/expectedSha256";

export const BINARY_POINTER = "/body/resourceBinary";

/**
 * The source named by validated JSON fields (at most one is set), or undefined for none. Inline
 * content over `maxInlineBytes` is refused (413) before it is decoded.
 */
export function toContentSource(
  fields: { resourceBinary?: string; resourceExternalURI?: string; expectedSha256?: string },
  maxInlineBytes: number,
): ContentSource | undefined {
  const digest =
    fields.expectedSha256 === undefined
      ? undefined
      : { sha256: fields.expectedSha256.toLowerCase(), pointer: EXPECTED_SHA256_POINTER };
  if (fields.resourceExternalURI !== undefined) return { kind: "uri", uri: fields.resourceExternalURI, digest };
  if (fields.resourceBinary === undefined) return undefined;
  if (decodedLength(fields.resourceBinary) > maxInlineBytes) {
    const detail = `inline content is limited to ${maxInlineBytes} bytes; send larger files with uploadResource (multipart/form-data)`;
    throw new ProblemError("PAYLOAD_TOO_LARGE", detail, { errors: [{ pointer: BINARY_POINTER, detail }] });
  }
  return { kind: "bytes", bytes: decodeBase64(fields.resourceBinary), pointer: BINARY_POINTER, digest };
}

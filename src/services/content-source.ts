/**
 * Where new content comes from: an external URI (downloaded under the SSRF policy), inline base64
 * bytes from the JSON body (small, capped), or a streamed multipart upload (large files).
 */
import { ProblemError } from "../errors.js";
import { decodeBase64, decodedLength } from "../lib/base64.js";

/** `pointer` names the request field that problems with this content should point at. */
export type ContentSource =
  | { kind: "uri"; uri: string }
  | { kind: "bytes"; bytes: Uint8Array<ArrayBuffer>; pointer: string }
  | { kind: "stream"; body: ReadableStream<Uint8Array>; pointer: string };

export const BINARY_POINTER = "/body/resourceBinary";

/**
 * The source named by validated JSON fields (at most one is set), or undefined for none. Inline
 * content over `maxInlineBytes` is refused (413) before it is decoded.
 */
export function toContentSource(
  fields: { resourceBinary?: string; resourceExternalURI?: string },
  maxInlineBytes: number,
): ContentSource | undefined {
  if (fields.resourceExternalURI !== undefined) return { kind: "uri", uri: fields.resourceExternalURI };
  if (fields.resourceBinary === undefined) return undefined;
  if (decodedLength(fields.resourceBinary) > maxInlineBytes) {
    const detail = `inline content is limited to ${maxInlineBytes} bytes; send larger files with uploadResource (multipart/form-data)`;
    throw new ProblemError("PAYLOAD_TOO_LARGE", detail, { errors: [{ pointer: BINARY_POINTER, detail }] });
  }
  return { kind: "bytes", bytes: decodeBase64(fields.resourceBinary), pointer: BINARY_POINTER };
}

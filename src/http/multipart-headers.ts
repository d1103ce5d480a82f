/**
 * Header-level parsing for multipart/form-data: the boundary from the request's Content-Type
 * (RFC 2046 §5.1.1) and each part's header block and Content-Disposition (RFC 7578 §4.2, RFC 8187).
 */
import { ProblemError } from "../problems.js";

/** What the parser knows about a part before its body: see `MultipartPart` in `multipart.ts`. */
export interface PartHead {
  name: string;
  filename: string | null;
  contentType: string | null;
  headers: Headers;
}

export interface HeaderLimits {
  maxHeaderLines: number;
  maxFieldNameBytes: number;
}

// RFC 9110 §5.6.2 token.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// RFC 2046 §5.1.1 bchars: 1–70 of them, and the last one must not be a space.
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;
// RFC 8187 §3.2.1 ext-value: charset "'" [ language ] "'" value-chars.
const EXT_VALUE = /^([!#$%&+\-^_`{}~0-9A-Za-z]+)'[0-9A-Za-z-]*'((?:%[0-9A-Fa-f]{2}|[!#$&+\-.^_`|~0-9A-Za-z])*)$/;
// The WHATWG form encoder (browsers, undici, curl) escapes only these three in name/filename.
const WHATWG_ESCAPE = /%(0A|0D|22)/gi;

const invalid = (detail: string) => new ProblemError("VALIDATION_FAILED", detail);
const tooLarge = (detail: string) => new ProblemError("PAYLOAD_TOO_LARGE", detail);

/**
 * The boundary of a `multipart/form-data` Content-Type. Another media type is 415; a missing,
 * malformed or non-RFC 2046 boundary is 400, both before a byte of the body is read.
 */
export function parseBoundary(contentType: string): string {
  const semi = contentType.indexOf(";");
  const type = (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
  if (type !== "multipart/form-data") {
    throw new ProblemError("UNSUPPORTED_MEDIA_TYPE", "expected a multipart/form-data request body");
  }
  const params = parseParameters(semi < 0 ? "" : contentType.slice(semi), "Content-Type");
  const boundary = params.get("boundary");
  if (boundary === undefined) throw invalid("multipart/form-data Content-Type has no boundary parameter");
  if (!BOUNDARY.test(boundary)) throw invalid("multipart boundary must be 1-70 RFC 2046 characters");
  return boundary;
}

/**
 * Parses one part's header block (the bytes between the delimiter line and the blank line). HTTP
 * header bytes are Latin-1 in `Headers`; name and filename are re-read as UTF-8, which is what
 * browsers send (RFC 7578 §5.1.1).
 */
export function parsePartHeaders(block: Uint8Array, limits: HeaderLimits): PartHead {
  const lines = block.length === 0 ? [] : latin1(block).split("\r\n");
  if (lines.length > limits.maxHeaderLines) {
    throw tooLarge(`multipart part has more than ${limits.maxHeaderLines} header lines`);
  }
  const fields: [string, string][] = [];
  for (const line of lines) {
    const last = fields.at(-1);
    if (line.startsWith(" ") || line.startsWith("\t")) {
      // obs-fold (RFC 5322 §2.2.3, still legal in MIME part headers): a continuation of the last field.
      if (!last) throw invalid("multipart part header block starts with a continuation line");
      last[1] = `${last[1]} ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(":");
    const name = line.slice(0, Math.max(colon, 0));
    if (!TOKEN.test(name)) throw invalid("malformed multipart part header line");
    fields.push([name.toLowerCase(), line.slice(colon + 1).trim()]);
  }
  const headers = new Headers();
  for (const [name, value] of fields) {
    try {
      headers.append(name, value);
    } catch {
      throw invalid(`malformed multipart part header "${name}"`);
    }
  }
  const dispositions = fields.filter(([name]) => name === "content-disposition");
  if (dispositions.length !== 1)
    throw invalid("each multipart part needs exactly one Content-Disposition (RFC 7578 §4.2)");
  const { name, filename } = parseDisposition(dispositions[0]![1]);
  if (utf8Length(name) > limits.maxFieldNameBytes) {
    throw tooLarge(`multipart field name longer than ${limits.maxFieldNameBytes} bytes`);
  }
  return { name, filename, contentType: headers.get("content-type"), headers };
}

/** `form-data; name="..."; filename="..."`, preferring `filename*` (RFC 6266 §4.3) when both are sent. */
function parseDisposition(value: string): { name: string; filename: string | null } {
  const semi = value.indexOf(";");
  const type = (semi < 0 ? value : value.slice(0, semi)).trim().toLowerCase();
  if (type !== "form-data") throw invalid('multipart part Content-Disposition must be "form-data" (RFC 7578 §4.2)');
  const params = parseParameters(semi < 0 ? "" : value.slice(semi), "Content-Disposition");
  const name = pick(params, "name");
  if (name === null) throw invalid("multipart part Content-Disposition has no name parameter");
  return { name, filename: pick(params, "filename") };
}

function pick(params: Map<string, string>, key: string): string | null {
  const ext = params.get(`${key}*`);
  if (ext !== undefined) return decodeExtValue(ext, key);
  const plain = params.get(key);
  if (plain === undefined) return null;
  return utf8(latin1Bytes(plain)).replace(WHATWG_ESCAPE, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** RFC 8187 `UTF-8''%E2%82%AC.txt`; ISO-8859-1 is the only other charset §3.2.1 requires. */
function decodeExtValue(value: string, key: string): string {
  const match = EXT_VALUE.exec(value);
  const charset = match?.[1]?.toLowerCase();
  if (!match || (charset !== "utf-8" && charset !== "iso-8859-1"))
    throw invalid(`malformed ${key}* parameter (RFC 8187)`);
  const bytes = latin1Bytes(
    match[2]!.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
  );
  if (charset === "iso-8859-1") return latin1(bytes);
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw invalid(`${key}* parameter is not valid UTF-8`);
  }
}

/**
 * `*( OWS ";" OWS token "=" ( token / quoted-string ) )` (RFC 9110 §5.6.6) into a map with
 * lower-cased keys. A repeated parameter is rejected: two filenames are ambiguous, and an
 * intermediary might have checked the other one.
 */
function parseParameters(input: string, header: string): Map<string, string> {
  const params = new Map<string, string>();
  const malformed = () => invalid(`malformed ${header} parameters`);
  const n = input.length;
  let i = 0;
  const skipOws = () => {
    while (i < n && (input[i] === " " || input[i] === "\t")) i++;
  };
  for (;;) {
    skipOws();
    if (i >= n) return params;
    if (input[i] !== ";") throw malformed();
    i++;
    skipOws();
    if (i >= n) return params; // a trailing ";" is harmless
    const eq = input.indexOf("=", i);
    if (eq < 0) throw malformed();
    const key = input.slice(i, eq).trimEnd().toLowerCase();
    if (!TOKEN.test(key)) throw malformed();
    i = eq + 1;
    skipOws();
    let value = "";
    if (input[i] === '"') {
      // quoted-pair only for `\"` and `\\`: browsers send backslashes raw (C:\dir\x stays intact),
      // while RFC-style senders escape exactly these two.
      for (i++; ; i++) {
        if (i >= n) throw malformed();
        const c = input[i]!;
        if (c === '"') break;
        if (c === "\\" && (input[i + 1] === '"' || input[i + 1] === "\\")) value += input[++i]!;
        else value += c;
      }
      i++;
    } else {
      const end = input.slice(i).search(/[;\s]/);
      value = end < 0 ? input.slice(i) : input.slice(i, i + end);
      if (!TOKEN.test(value)) throw malformed();
      i += value.length;
    }
    if (params.has(key)) throw invalid(`duplicate "${key}" parameter in ${header}`);
    params.set(key, value);
  }
}

/** One char per byte: how HTTP header bytes map to a JS string (RFC 9110 §5.5). */
function latin1(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 4096) out += String.fromCharCode(...bytes.subarray(i, i + 4096));
  return out;
}

function latin1Bytes(text: string): Uint8Array {
  return Uint8Array.from(text, (c) => c.charCodeAt(0) & 0xff);
}

const utf8 = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const utf8Length = (text: string) => new TextEncoder().encode(text).length;

/** The streaming upload: multipart fields → validated metadata, the file part → storage as it arrives. */
import type { Context } from "hono";
import type { ZodError } from "zod";
import type { Guards } from "../../auth/guards.js";
import { ProblemError } from "../../problems.js";
import { toFieldErrors } from "../../http/problem-handlers.js";
import { parseSha256Digest } from "../../lib/digest-fields.js";
import { announcedDigests, digestedBody } from "../../http/middleware/request-digest.js";
import { type MultipartPart, parseMultipart, readText } from "../../http/multipart.js";
import { digestMismatch } from "../../services/content.js";
import { EXPECTED_SHA256_POINTER, type ExpectedDigest } from "../../services/content-source.js";
import type { ResourceService } from "../../services/resources.js";
import { MediaTypeSchema } from "../resources/schemas.js";
import type { BlobStore } from "../../storage/blob-store.js";
import { dataPath } from "../../api-paths.js";
import { toResourceView } from "../resources/views.js";
import { createRouter, type RouteGroup } from "../router.js";
import { MAX_TAGS } from "../resources/description-schemas.js";
import { REPEATABLE_FIELDS, UPLOAD_FIELDS, UploadFieldsSchema, uploadResource } from "./contract.js";
import { type StagedFile, stageFile } from "./staged-file.js";

export const FILE_FIELD = "file";
const MAX_FIELD_BYTES = 4096;
/**
 * Fields allowed more (issue 38): a description is up to 2 000 characters (8 000 bytes of UTF-8),
 * metadata up to 16 KiB as compact JSON (its text may be spaced out). All of them together stay
 * within UPLOAD_FRAMING_BYTES.
 */
const LARGE_FIELDS: Record<string, number> = { description: 8000, metadata: 32 * 1024 };
/**
 * What an upload's body may carry besides the file: its fields (at most MAX_FIELD_BYTES each), part
 * heads and boundaries. A declared Content-Length over CMS_MAX_RESOURCE_BYTES plus this is refused
 * before the body is read (413), and one under it promises a file of at least Content-Length minus
 * this, which the tenant's quota must have room for before the file is read (507).
 */
export const UPLOAD_FRAMING_BYTES = 64 * 1024;

/** The request's declared body length, if it has one (a chunked body has none). */
function declaredLength(c: Context): number | undefined {
  if (c.req.header("transfer-encoding") !== undefined) return undefined;
  const length = Number(c.req.header("content-length"));
  return Number.isSafeInteger(length) && length >= 0 ? length : undefined;
}

const badPart = (part: MultipartPart, detail: string) =>
  new ProblemError("VALIDATION_FAILED", `invalid multipart part "${part.name}": ${detail}`, {
    errors: [{ pointer: `/body/${part.name.replaceAll("~", "~0").replaceAll("/", "~1")}`, detail }],
  });

/**
 * The SHA-256 the file must hash to: the `expectedSha256` field, or the file part's own `Repr-Digest` /
 * `Content-Digest` (RFC 9530: they describe that part's bytes). Announcements that disagree are a
 * mismatch whatever arrives, so they are refused before anything is read.
 */
function expectedDigest(part: MultipartPart, field: string | undefined): ExpectedDigest | undefined {
  const announced: ExpectedDigest[] = field ? [{ sha256: field.toLowerCase(), pointer: EXPECTED_SHA256_POINTER }] : [];
  for (const header of ["repr-digest", "content-digest"]) {
    const parsed = parseSha256Digest(part.headers.get(header));
    if (parsed.kind === "malformed")
      throw badPart(part, `its ${header} header is not a valid sha-256 digest field (RFC 9530)`);
    if (parsed.kind === "sha256") announced.push({ sha256: parsed.hex, pointer: `/body/${FILE_FIELD}/${header}` });
  }
  const [first, ...others] = announced;
  const disagreeing = others.find((other) => other.sha256 !== first?.sha256);
  if (disagreeing) throw digestMismatch(disagreeing);
  return first;
}

/**
 * The file's bytes for storage, whose end waits until the rest of the request (later parts, the close
 * delimiter) is read and `verify` passes: a request-level digest that does not match errors the
 * stream, so storage keeps nothing (a failed put leaves nothing behind) and no row is written.
 */
function heldUntilVerified(
  file: ReadableStream<Uint8Array>,
  parts: AsyncIterableIterator<MultipartPart>,
  verify: () => void,
): ReadableStream<Uint8Array> {
  const reader = file.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (!done) return controller.enqueue(value);
        // Parts after the file are skipped (not stored), but their bytes are part of what was hashed.
        for (let next = await parts.next(); !next.done; next = await parts.next()) await next.value.body.cancel();
        verify();
        controller.close();
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}

/** The fields as the schema reads them: the file part's name stands in for an absent resourceName. */
const fieldsWith = (
  part: MultipartPart,
  fields: Record<string, string | string[]>,
): Record<string, string | string[] | undefined> => ({
  resourceName: part.filename || undefined,
  ...fields,
});

/**
 * The file part's Content-Type, which resources.create checks against the bytes when no
 * resourceMediaType is given (clients send one guessed from the name, or application/octet-stream).
 * One that is no media type is refused before the file is read.
 */
function partMediaType(part: MultipartPart): string | undefined {
  if (part.contentType === null) return undefined;
  if (!MediaTypeSchema.safeParse(part.contentType).success)
    throw badPart(part, "its content-type header is not a media type per RFC 6838, e.g. image/png");
  return part.contentType;
}

/** The 400 naming each field the schema refused. */
function invalidFields(error: ZodError): ProblemError {
  const errors = toFieldErrors(error, "body");
  const names = errors.map((e) => e.pointer.slice(6)).join(", ");
  return new ProblemError("VALIDATION_FAILED", `invalid upload fields: ${names}`, { errors });
}

export function createUploadRouter({
  resources,
  guards,
  maxBytes,
  staging,
}: {
  resources: ResourceService;
  guards: Guards;
  maxBytes: number;
  /** Where a file part sent before its fields waits for them. */
  staging: BlobStore;
}): RouteGroup {
  const router = createRouter();
  router.openAPIRegistry.registerPath(uploadResource);

  router.post(uploadResource.path, guards.role("creator"), async (c) => {
    // Checked before the body is touched: with `Expect: 100-continue` the client then sends none of it.
    const declared = declaredLength(c);
    if (declared !== undefined && declared > maxBytes + UPLOAD_FRAMING_BYTES) {
      const detail = `the upload's body (${declared} bytes) is larger than the content limit of ${maxBytes} bytes plus ${UPLOAD_FRAMING_BYTES} for its fields`;
      throw new ProblemError("PAYLOAD_TOO_LARGE", detail, { errors: [{ pointer: "/header/content-length", detail }] });
    }
    // A request-level digest covers the body as sent: hashed as the parser reads it (400 here if malformed).
    const digests = announcedDigests(c);
    const raw = c.req.raw.body ?? new ReadableStream();
    const request = digests.length > 0 ? digestedBody(raw, digests) : null;
    const parts = parseMultipart(request?.body ?? raw, c.req.header("content-type") ?? "", {
      maxParts: UPLOAD_FIELDS.length + MAX_TAGS + 4,
      maxFieldBytes: Math.max(MAX_FIELD_BYTES, ...Object.values(LARGE_FIELDS)),
    });
    const fields: Record<string, string | string[]> = {};
    const ctx = { principal: c.get("principal"), signal: c.req.raw.signal };
    const filePointer = `/body/${FILE_FIELD}`;
    let staged: { part: MultipartPart; mediaType: string | undefined; file: StagedFile } | undefined;
    try {
      for await (const part of parts) {
        if (part.filename === null) {
          if (!UPLOAD_FIELDS.includes(part.name))
            throw badPart(part, `unknown field; expected ${UPLOAD_FIELDS.join(", ")} and ${FILE_FIELD}`);
          const repeatable = REPEATABLE_FIELDS.includes(part.name);
          if (Object.hasOwn(fields, part.name) && !repeatable) throw badPart(part, "given twice");
          const text = await readText(part, LARGE_FIELDS[part.name] ?? MAX_FIELD_BYTES);
          // An empty field is an input left blank (HTML forms, the explorer send it): as if absent.
          if (text === "") continue;
          if (!repeatable) fields[part.name] = text;
          else fields[part.name] = [...((fields[part.name] as string[] | undefined) ?? []), text];
          continue;
        }
        if (part.name !== FILE_FIELD) throw badPart(part, `files go in the "${FILE_FIELD}" part`);
        if (staged) throw badPart(part, "given twice");
        const mediaType = partMediaType(part);
        const given = fieldsWith(part, fields);
        const parsed = UploadFieldsSchema.safeParse(given);
        if (!parsed.success) {
          // A field given but invalid is refused now, before the file is read; only missing fields may
          // still follow the file: stage it (streamed to storage) and decide at the end.
          if (parsed.error.issues.some((issue) => given[String(issue.path[0])] !== undefined))
            throw invalidFields(parsed.error);
          staged = { part, mediaType, file: await stageFile(staging, part.body, maxBytes, filePointer) };
          continue;
        }
        const digest = expectedDigest(part, parsed.data.expectedSha256);
        const body = request ? heldUntilVerified(part.body, parts, request.verify) : part.body;
        const source = { kind: "stream", body, pointer: filePointer, digest, mediaType } as const;
        const created = await resources.create(parsed.data, source, {
          ...ctx,
          atLeastBytes: Math.max(0, (declared ?? 0) - UPLOAD_FRAMING_BYTES),
        });
        return c.json(toResourceView(created.primary, created.files), 201, { location: dataPath(created.primary) });
      }
      if (!staged)
        throw new ProblemError("VALIDATION_FAILED", `the upload has no "${FILE_FIELD}" part`, {
          errors: [{ pointer: filePointer, detail: "a file part is required" }],
        });
      const parsed = UploadFieldsSchema.safeParse(fieldsWith(staged.part, fields));
      if (!parsed.success) throw invalidFields(parsed.error);
      // The whole body has been read: a request-level digest is settled before anything is stored.
      request?.verify();
      const digest = expectedDigest(staged.part, parsed.data.expectedSha256);
      const body = await staged.file.open();
      const source = { kind: "stream", body, pointer: filePointer, digest, mediaType: staged.mediaType } as const;
      const created = await resources.create(parsed.data, source, { ...ctx, atLeastBytes: staged.file.size });
      return c.json(toResourceView(created.primary, created.files), 201, { location: dataPath(created.primary) });
    } finally {
      // Parts after the file (and everything after a failure) are not read: stop the source.
      await parts.return?.();
      await staged?.file.drop();
    }
  });
  return router;
}

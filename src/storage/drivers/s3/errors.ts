/**
 * S3 driver errors: the driver name, S3 XML error bodies mapped to StorageError IO, and redaction
 * so credentials and signatures never reach an error message.
 */
import { StorageError } from "../../blob-store.js";
import { xmlText } from "./xml.js";

export const DRIVER = "s3";

/** The `cause` of a StorageError built from an S3 error response: the HTTP status and S3 error code. */
export class S3ResponseError extends Error {
  readonly status: number;
  /** S3's `<Code>` (e.g. `NoSuchBucket`, `AccessDenied`), or `HTTP <status>` when the body has none. */
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = "S3ResponseError";
    this.status = status;
    this.code = code;
  }
}

/** Removes secrets (and anything shaped like a SigV4 signature) from text destined for a message. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length > 0) out = out.split(secret).join("[redacted]");
  // A server might echo the Authorization header or a presigned URL back (s3rver does, in XML).
  return out
    .replace(/(Signature=)[0-9a-fA-F]{16,}/g, "$1[redacted]")
    .replace(/(X-Amz-Signature=)[^&\s"<]+/gi, "$1[redacted]")
    .replace(/(X-Amz-Security-Token=)[^&\s"<]+/gi, "$1[redacted]");
}

const MAX_ERROR_BODY_CHARS = 16 * 1024;
const MAX_MESSAGE_CHARS = 200;

/** Reads at most MAX_ERROR_BODY_CHARS of a response body (an error page can be anything). */
export async function readBoundedText(response: Response): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    while (text.length < MAX_ERROR_BODY_CHARS) {
      const { done, value } = await reader.read();
      if (done) return text + decoder.decode();
      text += decoder.decode(value, { stream: true });
    }
    await reader.cancel().catch(() => {});
    return text.slice(0, MAX_ERROR_BODY_CHARS);
  } catch {
    return text;
  }
}

/**
 * Answers of a bucket that refuses to store more: HTTP 507 (MinIO's XMinioStorageFull, WebDAV-style
 * gateways) or a quota error code (Ceph RGW's QuotaExceeded, Backblaze B2's StorageCapExceeded).
 */
const NO_SPACE_CODES = new Set(["XMinioStorageFull", "QuotaExceeded", "StorageCapExceeded", "InsufficientStorage"]);

/**
 * S3 reports errors as `<Error><Code>…</Code><Message>…</Message></Error>`
 * (https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html). Only Code and Message are
 * used: other elements (StringToSign, AWSAccessKeyId, …) may carry request details.
 */
export function responseError(
  operation: string,
  status: number,
  body: string,
  secrets: readonly string[],
): StorageError {
  const code = xmlText(body, "Code") ?? `HTTP ${status}`;
  const rawMessage = xmlText(body, "Message") ?? "";
  const message = redact(
    rawMessage.length > MAX_MESSAGE_CHARS ? `${rawMessage.slice(0, MAX_MESSAGE_CHARS)}…` : rawMessage,
    secrets,
  );
  const safeCode = redact(code.slice(0, 64), secrets);
  const cause = new S3ResponseError(status, safeCode, message);
  const full = status === 507 || NO_SPACE_CODES.has(code);
  return new StorageError(
    DRIVER,
    full ? "NO_SPACE" : "IO",
    `${operation} failed: HTTP ${status} ${safeCode}${message ? `: ${message}` : ""}`,
    {
      cause,
    },
  );
}

/**
 * A failure to talk to the endpoint at all (DNS, refused, reset), naming it but nothing secret. The
 * fetch error is not attached as `cause`: an injected fetch may put anything (a Request) in it.
 */
export function networkError(
  operation: string,
  endpoint: string,
  err: unknown,
  secrets: readonly string[],
): StorageError {
  const cause = err instanceof Error ? err.cause : undefined;
  const code = cause instanceof Error ? (cause as Error & { code?: unknown }).code : undefined;
  const detail = typeof code === "string" ? code : err instanceof Error ? err.message : String(err);
  return new StorageError(DRIVER, "IO", `${operation} failed: cannot reach ${endpoint}: ${redact(detail, secrets)}`);
}

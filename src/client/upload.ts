/**
 * The streaming upload body for uploadResource: multipart/form-data with the fields first and the
 * file last, built chunk by chunk so the file is never held in memory, with a progress callback
 * counting file bytes as fetch pulls them.
 */
export interface UploadFields {
  resourceTenantId: string;
  resourceAuthor: string;
  resourceName?: string;
  resourceMediaType?: string;
}

export type Progress = (sent: number, total: number | undefined) => void;

const encoder = new TextEncoder();

// WHATWG's multipart/form-data encoding of names: escape the quote and line breaks.
const quoted = (value: string) => `"${value.replaceAll('"', "%22").replaceAll("\r", "%0D").replaceAll("\n", "%0A")}"`;

/** A random boundary no file is likely to contain (the parser also requires the CRLF before it). */
const newBoundary = () => `cms-${Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("")}`;

export function multipartUpload(fields: UploadFields, file: ReadableStream<Uint8Array>, size: number | undefined, onProgress?: Progress) {
  const boundary = newBoundary();
  // No media type given: none is sent, so the server decides (it may detect it from the bytes).
  const { resourceName = "upload", resourceMediaType, ...rest } = fields;
  const head =
    Object.entries({ ...rest, resourceName, ...(resourceMediaType ? { resourceMediaType } : {}) })
      .map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name=${quoted(name)}\r\n\r\n${value}\r\n`)
      .join("") +
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename=${quoted(resourceName)}\r\n` +
    (resourceMediaType ? `Content-Type: ${resourceMediaType}\r\n\r\n` : "\r\n");
  const reader = file.getReader();
  let sent = 0;
  let done = false;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(head));
    },
    async pull(controller) {
      if (done) return;
      const chunk = await reader.read();
      if (chunk.done) {
        done = true;
        controller.enqueue(encoder.encode(`\r\n--${boundary}--\r\n`));
        controller.close();
        return;
      }
      sent += chunk.value.byteLength;
      controller.enqueue(chunk.value);
      onProgress?.(sent, size);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

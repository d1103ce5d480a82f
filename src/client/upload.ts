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
  /**
   * The file's likely type (say, from its name), sent only as the file part's Content-Type: without
   * resourceMediaType the server checks it against the bytes, where a declared type is stored as given.
   */
  fileType?: string;
}

export type Progress = (sent: number, total: number | undefined) => void;

const encoder = new TextEncoder();

/**
 * File bytes sent between two turns of the event loop. A file that is read without waiting (bytes
 * in memory, made on the fly) would otherwise be written whole before the runtime reads anything
 * on the connection: Node's fetch wrote a 100 MB body into a 401 sent at the first byte, and got
 * EPIPE when the server stopped reading. A turn lets it read the early answer and stop sending.
 */
const YIELD_EVERY_BYTES = 1024 * 1024;
const nextTurn = () => new Promise((resolve) => setTimeout(resolve, 0));

// WHATWG's multipart/form-data encoding of names: escape the quote and line breaks.
const quoted = (value: string) => `"${value.replaceAll('"', "%22").replaceAll("\r", "%0D").replaceAll("\n", "%0A")}"`;

/** A random boundary no file is likely to contain (the parser also requires the CRLF before it). */
const newBoundary = () =>
  `cms-${Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("")}`;

export function multipartUpload(
  fields: UploadFields,
  file: ReadableStream<Uint8Array>,
  size: number | undefined,
  onProgress?: Progress,
) {
  const boundary = newBoundary();
  // No media type given: none is sent, so the server decides (it may detect it from the bytes).
  const { resourceName = "upload", resourceMediaType, fileType, ...rest } = fields;
  const partType = resourceMediaType ?? fileType;
  const head =
    Object.entries({ ...rest, resourceName, ...(resourceMediaType ? { resourceMediaType } : {}) })
      .map(
        ([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name=${quoted(name)}\r\n\r\n${value}\r\n`,
      )
      .join("") +
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename=${quoted(resourceName)}\r\n` +
    (partType ? `Content-Type: ${partType}\r\n\r\n` : "\r\n");
  const headBytes = encoder.encode(head);
  const tail = `\r\n--${boundary}--\r\n`;
  const reader = file.getReader();
  let sent = 0;
  let sentSinceTurn = 0;
  let done = false;
  let stopped = false;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(headBytes);
    },
    async pull(controller) {
      if (done) return;
      if (sentSinceTurn >= YIELD_EVERY_BYTES) {
        sentSinceTurn = 0;
        await nextTurn();
      }
      const chunk = stopped ? undefined : await reader.read();
      if (!chunk || stopped) {
        done = true;
        controller.error(new Error("the server answered before the upload was sent"));
        return;
      }
      if (chunk.done) {
        done = true;
        controller.enqueue(encoder.encode(tail));
        controller.close();
        return;
      }
      sent += chunk.value.byteLength;
      sentSinceTurn += chunk.value.byteLength;
      controller.enqueue(chunk.value);
      onProgress?.(sent, size);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  // The whole body's length when the file's is known: the server refuses an upload too large for
  // its limit or the tenant's quota before reading it (a fetch that cannot send it ignores it).
  const length = size === undefined ? undefined : headBytes.byteLength + size + tail.length;
  /** The server has answered: read no more of the file (fetch may still be sending; it stops). */
  const stop = () => {
    if (stopped || done) return;
    stopped = true;
    reader.cancel().catch(() => {});
  };
  return { body, contentType: `multipart/form-data; boundary=${boundary}`, length, stop };
}

/** multipart/byteranges (RFC 9110 §14.6): the exact-length body of a multi-range answer, streamed part by part. */
import type { ByteRange } from "../storage/blob-store.js";
import type { OpenBlob } from "./blob-entity.js";
import { contentRange } from "./range.js";

const toStream = (body: ReadableStream<Uint8Array> | Uint8Array): ReadableStream<Uint8Array> =>
  body instanceof Uint8Array
    ? new ReadableStream<Uint8Array>({
        start(controller) {
          if (body.byteLength > 0) controller.enqueue(body.slice());
          controller.close();
        },
      })
    : body;

export interface Multipart {
  boundary: string;
  /** Exact byte length of the body. */
  length: number;
  stream(open: OpenBlob): ReadableStream<Uint8Array>;
}

export function multipartByteranges(ranges: ByteRange[], size: number, contentType: string): Multipart {
  const random = crypto.getRandomValues(new Uint8Array(16));
  const boundary = Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("");
  const encoder = new TextEncoder();
  // Each delimiter after the first starts with the CRLF that ends the previous part (RFC 2046 §5.1.1).
  const parts = ranges.map((range, i) => ({
    range,
    head: encoder.encode(
      `${i > 0 ? "\r\n" : ""}--${boundary}\r\nContent-Type: ${contentType}\r\nContent-Range: ${contentRange(range, size)}\r\n\r\n`,
    ),
  }));
  const tail = encoder.encode(`\r\n--${boundary}--\r\n`);
  const length = parts.reduce((sum, p) => sum + p.head.byteLength + p.range.end - p.range.start + 1, tail.byteLength);
  return { boundary, length, stream: (open) => partsStream(parts, tail, open) };
}

/**
 * Pull-based: nothing is opened or read until the consumer asks, one chunk per pull, and each part
 * is opened only once the previous one is drained — so backpressure holds and no part is buffered.
 */
function partsStream(
  parts: { range: ByteRange; head: Uint8Array }[],
  tail: Uint8Array,
  open: OpenBlob,
): ReadableStream<Uint8Array> {
  let next = 0;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  let remaining = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        // Loop until one chunk is enqueued: a pull that enqueues nothing would stall the reader.
        for (;;) {
          if (reader) {
            const { done, value } = await reader.read();
            if (done) {
              reader = undefined;
              // Content-Length is already sent; a short part must fail the body, not corrupt it.
              if (remaining > 0) throw new Error(`blob stream ended ${remaining} bytes short of its range`);
              continue;
            }
            if (remaining === 0) {
              // More bytes than the range asked for: drop them to keep the framing exact.
              await reader.cancel();
              reader = undefined;
              continue;
            }
            const chunk = value.byteLength > remaining ? value.subarray(0, remaining) : value;
            remaining -= chunk.byteLength;
            if (chunk.byteLength > 0) {
              controller.enqueue(chunk);
              return;
            }
            continue;
          }
          const part = parts[next++];
          if (!part) {
            controller.enqueue(tail);
            controller.close();
            return;
          }
          reader = toStream(await open(part.range)).getReader();
          remaining = part.range.end - part.range.start + 1;
          controller.enqueue(part.head);
          return;
        }
      },
      async cancel(reason) {
        await reader?.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

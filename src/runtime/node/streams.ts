/**
 * Node Readable → Web ReadableStream with real backpressure. `Readable.toWeb` on Node 20 reads
 * ahead eagerly (stack-notes: memory grew with the file), so we pull one chunk per `pull()`.
 */
import type { Readable } from "node:stream";

export function nodeToWebStream(source: Readable): ReadableStream<Uint8Array> {
  let ended = false;
  let failure: unknown = null;
  let wake: (() => void) | null = null;
  const signal = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  source.on("readable", signal);
  source.on("end", () => {
    ended = true;
    signal();
  });
  source.on("error", (err) => {
    failure = err;
    signal();
  });
  source.pause();

  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          if (failure) throw failure;
          const chunk: Buffer | null = source.read();
          if (chunk !== null) {
            controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
            return;
          }
          if (ended || source.readableEnded) {
            controller.close();
            return;
          }
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
        }
      },
      cancel(reason) {
        source.destroy(reason instanceof Error ? reason : undefined);
      },
    },
    // highWaterMark 0: nothing is read until the consumer asks for it.
    { highWaterMark: 0 },
  );
}

/**
 * Node Readable → Web ReadableStream with real backpressure: one chunk per `pull()`. `Readable.toWeb`
 * read its whole source ahead of the reader in older releases (nodejs/node#46347: memory grew with
 * the file). Node 20.20.2 no longer does (a reader that took one chunk of 256 MiB left 0.2 MiB read),
 * but this bound holds on every release the package supports.
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

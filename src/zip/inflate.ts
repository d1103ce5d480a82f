/**
 * Raw-deflate decompression (APPNOTE.TXT 4.4.5 method 8) on `DecompressionStream`, fed one small
 * slice at a time and only when the consumer is waiting, so a bomb cannot run ahead of the caller.
 */

/**
 * Why not `input.pipeThrough(new DecompressionStream("deflate-raw"))`: on Node 20 the pipe keeps
 * writing regardless of the readable side, so 200 KiB of deflated zeros became 200 MiB of buffered
 * output before the first chunk was read. Here a slice is written only after the previous write
 * settled and no output is waiting, so buffered output is bounded by one slice's expansion.
 */
export function inflateRaw(input: ReadableStream<Uint8Array<ArrayBuffer>>): ReadableStream<Uint8Array> {
  const inflater = new DecompressionStream("deflate-raw");
  const writer = inflater.writable.getWriter();
  const output = inflater.readable.getReader();
  const source = input.getReader();
  let feeding: Promise<void> | undefined;
  let inputDone = false;
  let pendingRead: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;

  const feed = async () => {
    const { done, value } = await source.read();
    if (done) {
      inputDone = true;
      await writer.close();
    } else {
      await writer.write(value);
    }
  };
  const release = async (reason: unknown) => {
    await Promise.allSettled([source.cancel(reason), writer.abort(reason), output.cancel(reason)]);
  };
  // Both promises may settle while nobody awaits them (after an error elsewhere); they are
  // always raced or released, so a rejection here is never lost, only not reported twice.
  const quiet = <T>(p: Promise<T>) => (p.catch(() => undefined), p);

  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          pendingRead ??= quiet(output.read());
          for (;;) {
            if (!feeding && !inputDone) feeding = quiet(feed());
            // Output first: input is fed only while the inflater has nothing for a waiting reader.
            const result = feeding
              ? await Promise.race([pendingRead, feeding.then(() => undefined)])
              : await pendingRead;
            if (result) {
              pendingRead = undefined;
              if (result.done) controller.close();
              else controller.enqueue(result.value);
              return;
            }
            feeding = undefined;
          }
        } catch (err) {
          await release(err);
          throw err;
        }
      },
      cancel: release,
    },
    { highWaterMark: 0 },
  );
}

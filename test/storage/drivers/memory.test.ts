// Runs the blob-store conformance suite against the memory driver, plus its aliasing guarantees.
import { describe, expect, it } from "vitest";
import { createMemoryBlobStore } from "../../../src/storage/drivers/memory.js";
import { parseBlobKey } from "../../../src/storage/keys.js";
import { describeBlobStore } from "../blob-store.contract.js";

describeBlobStore("memory", async () => ({ store: createMemoryBlobStore(), cleanup: async () => {} }));

async function readAll(stream: ReadableStream<Uint8Array>): Promise<number[]> {
  const out: number[] = [];
  for await (const chunk of stream) out.push(...chunk);
  return out;
}

describe("memory driver extras", () => {
  it("does not alias the caller's buffers on put or get", async () => {
    const store = createMemoryBlobStore();
    const key = parseBlobKey("alias");
    const input = new Uint8Array([1, 2, 3]);
    await store.put(
      key,
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(input);
          controller.close();
        },
      }),
    );
    input.fill(9); // the producer reuses its buffer

    const first = await store.get(key);
    const reader = first!.body.getReader();
    const { value } = await reader.read();
    value!.fill(7); // a consumer scribbles on what it read
    await reader.cancel();

    expect(await readAll((await store.get(key))!.body)).toEqual([1, 2, 3]);
  });

  it("reports its driver name", () => {
    expect(createMemoryBlobStore().driver).toBe("memory");
  });
});

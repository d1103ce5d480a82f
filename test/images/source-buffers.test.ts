/**
 * The reused buffers small image sources are read into (runtime/host/source-buffers.ts): bounded in
 * number and size, and filled exactly, from a real file's range or a stream, or refused.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ImageError } from "../../src/images/errors.js";
import { createSourceBuffers, readFileInto, readStreamInto } from "../../src/runtime/host/source-buffers.js";
import { bombPng } from "./bomb.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-source-buffers-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const streamOf = (...chunks: Uint8Array[]) => new Blob(chunks.map((c) => new Uint8Array(c))).stream();

describe("image source buffers", () => {
  it("hands out at most `count` buffers, none for a source larger than `bytes`, and reuses what is given back", () => {
    const buffers = createSourceBuffers({ count: 2, bytes: 1024 });
    expect(buffers.take(1025)).toBeUndefined();
    const a = buffers.take(1024);
    const b = buffers.take(10);
    expect(a?.length).toBe(1024);
    expect(b && b !== a).toBe(true);
    expect(buffers.take(10)).toBeUndefined(); // both in use
    buffers.give(a!);
    expect(buffers.take(10)).toBe(a);
  });

  it("prepare makes one buffer up front; the rest are made when first needed", () => {
    const allocations = vi.spyOn(Buffer, "allocUnsafeSlow");
    try {
      const buffers = createSourceBuffers({ count: 2, bytes: 64 });
      buffers.prepare();
      buffers.prepare(); // once
      expect(allocations).toHaveBeenCalledTimes(1);
      const first = buffers.take(1);
      expect(allocations).toHaveBeenCalledTimes(1); // the prepared one
      const second = buffers.take(1);
      expect(allocations).toHaveBeenCalledTimes(2);
      expect(first && second && first !== second).toBe(true);
      expect(buffers.take(1)).toBeUndefined();
    } finally {
      allocations.mockRestore();
    }
  });

  it("ignores a second give and a buffer it never handed out: no two takers share one", () => {
    const buffers = createSourceBuffers({ count: 2, bytes: 64 });
    const a = buffers.take(1)!;
    buffers.give(a);
    buffers.give(a);
    buffers.give(Buffer.alloc(64));
    const taken = [buffers.take(1), buffers.take(1), buffers.take(1)];
    expect(taken[0]).toBe(a);
    expect(taken[1] && taken[1] !== a).toBe(true);
    expect(taken[2]).toBeUndefined();
  });

  it("reads a file's range past its header, exactly its size", async () => {
    const path = join(dir, "blob");
    await writeFile(path, Buffer.concat([Buffer.from("HEADER"), Buffer.from("the image bytes"), Buffer.from("!!")]));
    const bytes = await readFileInto(Buffer.alloc(64), path, 6, 15);
    expect(bytes.toString()).toBe("the image bytes");
    await expect(readFileInto(Buffer.alloc(64), path, 6, 40)).rejects.toThrow(/ended after 17 of its 40 bytes/);
  });

  it("reads a stream of exactly its size; a longer or shorter one is an error", async () => {
    const buffer = Buffer.alloc(16);
    const a = new TextEncoder().encode("abcd");
    const b = new TextEncoder().encode("efgh");
    expect((await readStreamInto(buffer, streamOf(a, b), 8, 1e6)).toString()).toBe("abcdefgh");
    await expect(readStreamInto(buffer, streamOf(a, b), 6, 1e6)).rejects.toThrow(/longer than its 6 bytes/);
    await expect(readStreamInto(buffer, streamOf(a), 8, 1e6)).rejects.toThrow(/ended after 4 of its 8 bytes/);
  });

  it("refuses a bomb from its header and cancels the stream: the rest is never pulled", async () => {
    let pulled = 0;
    const header = bombPng();
    const source = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(pulled === 1 ? new Uint8Array(header) : new Uint8Array(64 * 1024));
      },
    });
    const refused = await readStreamInto(Buffer.alloc(8 * 1024 * 1024), source, 4 * 1024 * 1024, 50_000_000).catch(
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(ImageError);
    expect((refused as ImageError).code).toBe("IMAGE_TOO_LARGE");
    expect(pulled).toBeLessThan(5);
  });
});

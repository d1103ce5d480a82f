/**
 * uploadResource on the server as shipped (the bundle, its own process): a 256 MiB multipart upload
 * is streamed to storage, so the process's peak RSS stays far below the upload's size. A process of
 * its own because RSS is per process (and the node project builds the bundle first: test/routes runs
 * in node-shared, which does not).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { API, type ResourceDto } from "../helpers/cms-client.js";
import { patternByte, patternBytes } from "../helpers/origin.js";
import { spawnServer } from "../helpers/spawn-server.js";

describe("uploadResource memory", () => {
  const MiB = 1024 * 1024;

  /** A multipart body whose 256 MiB file part is generated while it is sent, never held by the client either. */
  function streamedForm(size: number): { body: ReadableStream<Uint8Array>; type: string } {
    const boundary = "----cms-test-boundary";
    const head = new TextEncoder().encode(
      [
        `--${boundary}\r\nContent-Disposition: form-data; name="resourceAuthor"\r\n\r\nbig\r\n`,
        `--${boundary}\r\nContent-Disposition: form-data; name="resourceTenantId"\r\n\r\nbig\r\n`,
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ].join(""),
    );
    const tail = new TextEncoder().encode(`\r\n--${boundary}--\r\n`);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => controller.enqueue(head),
      pull(controller) {
        if (sent === size) {
          controller.enqueue(tail);
          controller.close();
          return;
        }
        const n = Math.min(MiB, size - sent);
        controller.enqueue(patternBytes(sent, sent + n));
        sent += n;
      },
    });
    return { body, type: `multipart/form-data; boundary=${boundary}` };
  }

  it("streams a 256 MiB upload to storage with flat server memory", async () => {
    const dir = await mkdtemp(join(tmpdir(), "cms-upload-"));
    const server = await spawnServer({
      CMS_VOLUME: join(dir, "volume"),
      CMS_DATABASE_URL: `file:${join(dir, "cms.db")}`,
    });
    try {
      const size = 256 * MiB;
      const { body, type } = streamedForm(size);
      const res = await fetch(`${server.url}${API}/uploadResource`, {
        method: "POST",
        body,
        headers: { "content-type": type },
        duplex: "half",
      } as RequestInit);
      expect(res.status).toBe(201);
      const created = (await res.json()) as ResourceDto;
      expect(created.size).toBe(size);
      const head = await fetch(`${server.url}${API}/getData/${created.resourceURI}`, {
        headers: { range: "bytes=1000000-1000009" },
      });
      expect(new Uint8Array(await head.arrayBuffer())).toEqual(
        Uint8Array.from({ length: 10 }, (_, i) => patternByte(1_000_000 + i)),
      );
      // Holding the upload would need > 256 MiB; a streaming server stays near its idle size.
      expect(await server.peakRss()).toBeLessThan(200 * MiB);
    } finally {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

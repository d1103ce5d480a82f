// An origin that declares a Content-Length and sends more: a raw loopback origin (node:http cannot
// misbehave like this), the real app, its volume and database.
import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNodeFetchOrigin } from "../../src/origin/node-fetch.js";
import { expectProblem, tableCounts, volumeFiles } from "../helpers/cms-client.js";
import { json, startTestApp, type TestApp } from "../helpers/test-app.js";

const HEAD = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n";

/** `/together`: head, the declared 100 bytes and 5 000 more in one write. `/trickle`: the extra bytes 10 ms apart. Never closes. */
async function startLyingOrigin() {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    socket.once("data", (request) => {
      const path = request.toString("latin1").split(" ")[1];
      if (path === "/together") {
        socket.write(Buffer.concat([Buffer.from(HEAD), Buffer.alloc(5100, 97)]));
      } else {
        socket.write(Buffer.concat([Buffer.from(HEAD), Buffer.alloc(100, 97)]));
        const more = setInterval(() => socket.destroyed || socket.write(Buffer.alloc(1000, 98)), 10);
        socket.on("close", () => clearInterval(more));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

let origin: Awaited<ReturnType<typeof startLyingOrigin>>;
let app: TestApp;

beforeAll(async () => {
  origin = await startLyingOrigin();
  // An 8 s total budget: an answer within a couple of seconds proves the cut is not the timeout.
  app = await startTestApp({ CMS_FETCH_TIMEOUT_MS: "8000" });
});
afterAll(async () => {
  await app.close();
  await origin.close();
});

const create = (uri: string) =>
  fetch(
    app.url("/cms/v1.0/createResource"),
    json({
      resourceAuthor: "a",
      resourceExternalURI: uri,
      resourceMediaType: "text/plain",
      resourceName: "x.txt",
      resourceTenantId: "overrun",
    }),
  );

describe("an origin sending more than its Content-Length", () => {
  it("is refused at once with ORIGIN_FAILED: no row, no blob", async () => {
    const before = await volumeFiles(app);
    const started = performance.now();
    const res = await create(origin.url("/together"));
    const elapsed = performance.now() - started;
    const problem = await expectProblem(res, 502, "ORIGIN_FAILED", "/body/resourceExternalURI");
    expect(problem.detail).toMatch(/Content-Length/);
    expect(elapsed).toBeLessThan(2000);
    expect((await tableCounts(app)).resources).toBe(0);
    expect(await volumeFiles(app)).toEqual(before);
  });

  it("the fetcher stops reading at the declared length: the body stream fails, it does not hang", async () => {
    const fetchOrigin = createNodeFetchOrigin({ allowPrivate: true, totalTimeoutMs: 8000 });
    const res = await fetchOrigin(origin.url("/together"));
    expect(res.contentLength).toBe(100);
    const started = performance.now();
    await expect(new Response(res.body).arrayBuffer()).rejects.toMatchObject({ code: "ORIGIN_FAILED" });
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it("extra bytes trickling in after the declared length never stretch the fetch: it ends within 2 s", async () => {
    const started = performance.now();
    const res = await create(origin.url("/trickle"));
    expect(performance.now() - started).toBeLessThan(2000);
    // Whether the surplus arrived before the body was complete decides which; never a hang, never more than 100 bytes.
    if (res.status === 201) {
      expect((await res.json()).size).toBe(100);
    } else {
      await expectProblem(res, 502, "ORIGIN_FAILED");
    }
  });

  it("logged no unhandled error", () => {
    expect(app.unhandledErrors()).toEqual([]);
  });
});

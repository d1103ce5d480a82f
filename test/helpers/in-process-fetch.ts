/**
 * A `fetch` that hands requests straight to the app (`app.fetch`), with no socket. What a client
 * adds on the wire is added here too, so a spec reads and behaves the same on either transport: the
 * Host header (content answers depend on it) and the Content-Length of a body of known size (body
 * limits refuse on it before reading). A streamed body stays streamed, as fetch sends it chunked.
 */
import type { App } from "../../src/app.js";

/**
 * The origin of an in-process app's URLs. On loopback with a port nothing listens on, so a URL of it
 * handed to the global fetch by mistake is refused at once instead of leaving the machine.
 */
export const IN_PROCESS_ORIGIN = "http://127.0.0.1:1";

export function inProcessFetch(app: Pick<App, "fetch">) {
  return async (input: string | URL, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(input, IN_PROCESS_ORIGIN);
    if (url.origin !== IN_PROCESS_ORIGIN)
      throw new Error(`${url.href} is not this in-process app (${IN_PROCESS_ORIGIN})`);
    // Built as fetch builds it: a FormData body gets its multipart content-type here.
    const request = new Request(url, { ...init, duplex: "half" } as RequestInit);
    const headers = new Headers(request.headers);
    if (!headers.has("host")) headers.set("host", url.host);
    let body: BodyInit | null = request.body;
    if (body && !(init.body instanceof ReadableStream)) {
      // A body of known size (FormData, a string, bytes): serialised, so its length is known up front,
      // then sent in socket-sized chunks, as the app reads a body off the wire.
      const bytes = new Uint8Array(await request.arrayBuffer());
      if (!headers.has("content-length")) headers.set("content-length", String(bytes.byteLength));
      body = inChunks(bytes);
    }
    const { method, signal, redirect } = request;
    return app.fetch(new Request(url, { method, headers, body, signal, redirect, duplex: "half" } as RequestInit));
  };
}

/** What a socket read hands the app at most (a 64 KiB high-water mark). */
const CHUNK_BYTES = 64 * 1024;

function inChunks(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.subarray(offset, offset + CHUNK_BYTES));
      offset += CHUNK_BYTES;
    },
  });
}

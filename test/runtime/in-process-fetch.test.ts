/**
 * The in-process transport of test/helpers/test-app.ts must hand the app what a socket hands it, or
 * specs run in-process would test another request: the same echo app answers once through
 * @hono/node-server on 127.0.0.1 and once through inProcessFetch, and the two echoes must agree.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { form } from "../helpers/cms-client.js";
import { IN_PROCESS_ORIGIN, inProcessFetch } from "../helpers/in-process-fetch.js";

/** What the app saw: method, host, length, content-type, body bytes and the largest chunk read. */
const echo = {
  async fetch(req: Request): Promise<Response> {
    let bytes = 0;
    let largest = 0;
    for await (const chunk of (req.body ?? []) as AsyncIterable<Uint8Array>) {
      bytes += chunk.byteLength;
      largest = Math.max(largest, chunk.byteLength);
    }
    return Response.json({
      method: req.method,
      host: req.headers.get("host"),
      length: req.headers.get("content-length"),
      type: req.headers.get("content-type")?.replace(/boundary=.*/, "boundary=…") ?? null,
      bytes,
      largest,
    });
  },
};

const server = createServer(getRequestListener(echo.fetch));
let socketUrl: string;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  socketUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const inProcess = inProcessFetch(echo);
const big = new Uint8Array(1024 * 1024).fill(7);

describe("inProcessFetch hands the app what a socket does", () => {
  it.each([
    ["a GET", {}],
    ["a JSON string", { method: "POST", headers: { "content-type": "application/json" }, body: '{"a":1}' }],
    ["bytes", { method: "PUT", body: new Uint8Array([1, 2, 3]) }],
    ["a multipart form", { method: "POST", body: form({ a: "b" }, { bytes: new Uint8Array(10) }) }],
  ] as [string, RequestInit][])("%s: method, Host, Content-Length, type and bytes", async (_, init) => {
    const wire = (await (await fetch(`${socketUrl}/x`, init)).json()) as Record<string, unknown>;
    const direct = (await (await inProcess("/x", init)).json()) as Record<string, unknown>;
    expect({ ...direct, host: direct.host === new URL(IN_PROCESS_ORIGIN).host }).toEqual({ ...wire, host: true });
  });

  it("a large body arrives in socket-sized chunks, never as one piece", async () => {
    const answer = (await (await inProcess("/x", { method: "POST", body: big })).json()) as {
      bytes: number;
      largest: number;
    };
    expect(answer.bytes).toBe(big.byteLength);
    expect(answer.largest).toBeLessThanOrEqual(64 * 1024);
  });

  it("a streamed body stays streamed: no Content-Length, as fetch sends it chunked", async () => {
    const body = () => new Blob([big]).stream();
    const init = () => ({ method: "POST", body: body(), duplex: "half" }) as RequestInit;
    const wire = (await (await fetch(`${socketUrl}/x`, init())).json()) as { length: string | null; bytes: number };
    const direct = (await (await inProcess("/x", init())).json()) as { length: string | null; bytes: number };
    expect([direct.length, direct.bytes]).toEqual([wire.length, wire.bytes]);
    expect(direct.length).toBeNull();
  });

  it("refuses a URL of another origin instead of sending it anywhere", async () => {
    await expect(inProcess(`${socketUrl}/x`)).rejects.toThrow(/not this in-process app/);
  });
});

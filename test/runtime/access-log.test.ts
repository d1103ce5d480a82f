/**
 * The access log tells what really happened on the wire: bytes sent, the time to the last byte, and
 * whether the client went away — for a download a client aborted, not the status and length it was promised.
 */
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { API, useCmsApp } from "../helpers/cms-client.js";

const t = useCmsApp("accesslog");
const SIZE = 8 * 1024 * 1024;

const lineOf = async (requestId: string) => {
  for (let i = 0; i < 100; i++) {
    const line = t.app.logs.find((l) => l.msg === "request" && l.requestId === requestId);
    if (line) return line;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no access-log line for ${requestId}`);
};

/** Sends a GET on a raw socket, reads `keep` bytes of the answer, then closes the connection. */
function readThenHangUp(path: string, requestId: string, keep: number): Promise<number> {
  const { port } = new URL(t.app.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1", () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: ${requestId}\r\n\r\n`);
    });
    let received = 0;
    socket.on("data", (chunk: Buffer) => {
      received += chunk.length;
      if (received >= keep) {
        socket.destroy();
        resolve(received);
      }
    });
    socket.on("error", reject);
  });
}

describe("access log", () => {
  it("logs an aborted download as aborted, with the bytes actually sent", async () => {
    const created = await t.cms.create({
      resourceExternalURI: t.origin.url(`/gen/${SIZE}`),
      resourceBinary: undefined,
      resourceName: "big.bin",
    });
    const path = `${API}/getData/${created.resourceURI}`;

    const received = await readThenHangUp(path, "aborted-1", 256 * 1024);
    const aborted = await lineOf("aborted-1");
    expect(aborted).toMatchObject({ status: 200, aborted: true });
    // Never more than the client could have taken in: what it read plus what the kernel buffers held.
    expect(aborted.sentBytes).toBeGreaterThanOrEqual(received);
    expect(aborted.sentBytes).toBeLessThan(SIZE);

    const whole = await fetch(t.app.url(path), { headers: { "x-request-id": "whole-1" } });
    expect((await whole.arrayBuffer()).byteLength).toBe(SIZE);
    const complete = await lineOf("whole-1");
    expect(complete.aborted).toBeUndefined();
    // Headers included: a little more than the body.
    expect(complete.sentBytes).toBeGreaterThan(SIZE);
    expect(complete.sentBytes).toBeLessThan(SIZE + 4096);
  });

  it.each([
    ["the fast path (a cached small blob)", "getData"],
    ["the app", "getDataUuid"],
  ])("logs a request answered by %s once, with its id, path, status and duration", async (_label, verb) => {
    const created = await t.cms.create({}, "small");
    const path = `${API}/${verb}/${verb === "getData" ? created.resourceURI : created.resourceUID}`;
    const requestId = `once-${verb}`;
    const res = await fetch(t.app.url(path), { headers: { "x-request-id": requestId } });
    expect(res.headers.get("x-request-id")).toBe(requestId);
    expect(await res.text()).toBe("small");
    const line = await lineOf(requestId);
    expect(line).toMatchObject({ level: "info", method: "GET", path, status: 200 });
    expect(line.sentBytes).toBeGreaterThan(5);
    expect(typeof line.durationMs).toBe("number");
    expect(t.app.logs.filter((l) => l.msg === "request" && l.requestId === requestId)).toHaveLength(1);
  });

  it("gives a request without a usable id a fresh one, the same in the answer and the log", async () => {
    const res = await fetch(t.app.url("/apiversion"), { headers: { "x-request-id": "bad id\twith tab" } });
    const id = res.headers.get("x-request-id") as string;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await lineOf(id)).toMatchObject({ path: "/apiversion", status: 200 });
  });
});

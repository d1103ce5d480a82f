/**
 * A raw TCP client for HTTP/1.1 edge cases fetch() cannot produce or observe: malformed request
 * lines, huge paths, and several requests reusing one connection. Loopback only.
 */
import net from "node:net";

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface RawConnection {
  write(data: string | Uint8Array): void;
  /** The next complete response on this connection; rejects when the connection closes first. */
  response(timeoutMs?: number): Promise<RawResponse>;
  /** Resolves once the server has closed the connection (or after `timeoutMs` with false). */
  closed(timeoutMs?: number): Promise<boolean>;
  destroy(): void;
}

/** Parses one response off the front of `buffer`; null while it is incomplete. */
function takeResponse(buffer: Buffer): { response: RawResponse; rest: Buffer } | null {
  const end = buffer.indexOf("\r\n\r\n");
  if (end < 0) return null;
  const [statusLine = "", ...lines] = buffer.subarray(0, end).toString("latin1").split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const status = Number(statusLine.split(" ")[1]);
  const start = end + 4;
  if (headers["transfer-encoding"] === "chunked") {
    const last = buffer.indexOf("0\r\n\r\n", start);
    if (last < 0) return null;
    const raw = buffer.subarray(start, last).toString("utf8");
    const body = raw.replace(/(^|\r\n)[0-9a-f]+\r\n/gi, "");
    return { response: { status, headers, body }, rest: buffer.subarray(last + 5) };
  }
  const length = Number(headers["content-length"] ?? 0);
  if (buffer.length < start + length) return null;
  return {
    response: { status, headers, body: buffer.subarray(start, start + length).toString("utf8") },
    rest: buffer.subarray(start + length),
  };
}

export async function openRaw(port: number, host = "127.0.0.1"): Promise<RawConnection> {
  const socket = net.connect(port, host);
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  let buffer: Buffer = Buffer.alloc(0);
  let isClosed = false;
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const w of [...waiters]) w();
  };
  socket.on("data", (d: Buffer) => {
    buffer = Buffer.concat([buffer, d]);
    notify();
  });
  socket.on("error", () => {}); // a reset shows up as `close`
  socket.on("close", () => {
    isClosed = true;
    notify();
  });
  const until = <T>(check: () => T | undefined, timeoutMs: number, onTimeout: () => T | Error): Promise<T> =>
    new Promise((resolve, reject) => {
      const attempt = () => {
        let value: T | undefined;
        try {
          value = check();
        } catch (err) {
          done();
          return reject(err);
        }
        if (value !== undefined) {
          done();
          resolve(value);
        }
      };
      const timer = setTimeout(() => {
        done();
        const v = onTimeout();
        v instanceof Error ? reject(v) : resolve(v);
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(attempt);
      };
      waiters.add(attempt);
      attempt();
    });
  return {
    write: (data) => void socket.write(data),
    response: (timeoutMs = 5000) =>
      until(
        () => {
          const taken = takeResponse(buffer);
          if (taken) {
            buffer = taken.rest;
            return taken.response;
          }
          if (isClosed)
            throw new Error(`connection closed before a complete response (${buffer.length} bytes pending)`);
          return undefined;
        },
        timeoutMs,
        () => new Error(`no complete response within ${timeoutMs} ms`),
      ),
    closed: (timeoutMs = 5000) =>
      until(
        () => (isClosed ? true : undefined),
        timeoutMs,
        () => false,
      ),
    destroy: () => socket.destroy(),
  };
}

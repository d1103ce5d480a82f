/**
 * A webhook receiver on 127.0.0.1: records every request (headers, raw body, the sender's port) and
 * answers `status` (changeable while it runs), or holds its answers while `hold` is set (a receiver
 * that hangs) until `release()`. Tests verify what it got with the `standardwebhooks` package.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

export interface Received {
  headers: Record<string, string>;
  body: string;
  /** The sender's TCP port (a diagnosis: which connection sent it). */
  remotePort: number;
  /** When it arrived (Date.now()). */
  at: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  status: number;
  /** While true, requests are recorded but not answered until `release()`. */
  hold: boolean;
  /**
   * While true, the receiver is down: every connection is cut before a request is read (none is
   * recorded), and setting it cuts the open ones. Its URL stays known, so a subscription can name it
   * before it first answers, with no port probed up front.
   */
  down: boolean;
  /** Answers every held request with `status`. */
  release(): void;
  /** The events it got, each verified with `secret` (throws on a bad signature). */
  verified(secret: string): { id: string; event: { type: string; timestamp: string; data: Record<string, unknown> } }[];
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<Receiver> {
  const received: Received[] = [];
  const state = { status: 204, hold: false, down: false };
  const held: ServerResponse[] = [];
  /** Woken on each request: `waitFor` awaits arrivals instead of polling. */
  const arrivals = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      received.push({
        headers: req.headers as Record<string, string>,
        body,
        remotePort: req.socket.remotePort ?? 0,
        at: Date.now(),
      });
      for (const arrived of arrivals) arrived();
      if (state.hold) held.push(res);
      else res.writeHead(state.status).end();
    });
  });
  server.on("connection", (socket) => {
    if (state.down) socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    received,
    get status() {
      return state.status;
    },
    set status(s: number) {
      state.status = s;
    },
    get hold() {
      return state.hold;
    },
    set hold(h: boolean) {
      state.hold = h;
    },
    get down() {
      return state.down;
    },
    set down(d: boolean) {
      state.down = d;
      if (d) server.closeAllConnections();
    },
    release() {
      for (const res of held.splice(0)) if (!res.destroyed) res.writeHead(state.status).end();
    },
    verified(secret) {
      const wh = new Webhook(secret);
      return received.map((r) => ({
        id: r.headers["webhook-id"] as string,
        event: wh.verify(r.body, r.headers) as ReturnType<Receiver["verified"]>[number]["event"],
      }));
    },
    waitFor(count, timeoutMs = 20_000) {
      if (received.length >= count) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const arrived = () => {
          if (received.length < count) return;
          clearTimeout(timer);
          arrivals.delete(arrived);
          resolve();
        };
        const timer = setTimeout(() => {
          arrivals.delete(arrived);
          reject(new Error(`receiver got ${received.length} of ${count} requests`));
        }, timeoutMs);
        arrivals.add(arrived);
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Polls `check` until it returns a value (not undefined) or the time is up. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

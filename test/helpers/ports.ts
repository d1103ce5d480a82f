/**
 * Loopback sockets and ports, apart from test-app.ts: the helpers that start programs of their own
 * (sqld, nginx, Ceph) need a port, not the app, and a file that imports them should not load it.
 */
import { type AddressInfo, createServer, type Server as NetServer } from "node:net";
import { readFile } from "node:fs/promises";

export interface LoopbackSocket {
  socket: NetServer;
  port: number;
  /** `http://127.0.0.1:<port>` */
  url: string;
}

/** A socket bound to 127.0.0.1 on a port the OS picks, and its URL, for a server to take over. */
export async function bindLoopback(): Promise<LoopbackSocket> {
  const socket = createServer();
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = socket.address() as AddressInfo;
  return { socket, port, url: `http://127.0.0.1:${port}` };
}

/**
 * Only for programs that cannot listen on port 0 and report it (sqld, nginx, Ceph; their helpers
 * retry on "Address already in use" where a retry is cheap) and for a port where nothing listens
 * (a refused connection). A server of ours takes a socket from bindLoopback() instead.
 *
 * A port that was free a moment ago on 127.0.0.1, taken from below the kernel's ephemeral range: a
 * port from `listen(0)` would be handed again to the next `listen(0)` or outgoing connection of any
 * parallel test before the caller binds it (seen in CI: EADDRINUSE on a fixed CMS_PORT).
 */
export async function freePort(): Promise<number> {
  const range = await readFile("/proc/sys/net/ipv4/ip_local_port_range", "utf8").catch(() => "32768 60999");
  const below = Math.max(2048, Number(range.trim().split(/\s+/)[0]) || 32768);
  for (let attempt = 0; ; attempt++) {
    const port = 1024 + Math.floor(Math.random() * (below - 1024));
    const probe = createServer();
    const free = await new Promise<boolean>((resolve) => {
      probe.once("error", () => resolve(false));
      probe.listen(port, "127.0.0.1", () => resolve(true));
    });
    if (free) {
      await new Promise((resolve) => probe.close(resolve));
      return port;
    }
    if (attempt > 50) throw new Error("no free port below the ephemeral range");
  }
}

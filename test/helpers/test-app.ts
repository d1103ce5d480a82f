/**
 * Starts the real app with a temp volume and a temp libSQL file, wired as the Node entry wires it
 * (createServerDeps, createServices, createApp). Two transports, as h3's test matrix has: "socket"
 * serves it as the Node entry does (createNodeServer with its fast path, on 127.0.0.1); "in-process"
 * hands each request to `app.fetch`, for specifications of what the routes answer, which need no
 * socket. Specs send through `t.fetch(t.url(path), init)` and read the same on both. Captures log
 * lines so a test can assert that no request ended in an unhandled error.
 */
import { mkdtemp, rm } from "node:fs/promises";
import type { Server } from "node:http";
import type { AddressInfo, Server as NetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { type App, createApp } from "../../src/app.js";
import { parseConfig, withLoopbackPublicUrl } from "../../src/config.js";
import { createJsonLogger } from "../../src/lib/logger.js";
import { createNodeServer } from "../../src/runtime/node/server.js";
import { createServerDeps } from "../../src/runtime/host/deps.js";
import { createServices, type Services } from "../../src/services/index.js";
import { IN_PROCESS_ORIGIN, inProcessFetch } from "./in-process-fetch.js";
import { bindLoopback, type LoopbackSocket } from "./ports.js";

// Where they were first: many files still take them from here.
export { bindLoopback, freePort, type LoopbackSocket } from "./ports.js";

/** How requests reach the app: over a socket on 127.0.0.1, or straight to `app.fetch`. */
export type Transport = "socket" | "in-process";

export interface TestApp {
  transport: Transport;
  /** Over a socket, the server's URL; in-process, IN_PROCESS_ORIGIN (nothing listens there). */
  baseUrl: string;
  dir: string;
  volume: string;
  databaseUrl: string;
  logs: Record<string, unknown>[];
  deps: Awaited<ReturnType<typeof createServerDeps>>;
  services: Services;
  app: App;
  url(path: string): string;
  /**
   * fetch for this app (a path or one of its url()s): over the socket, or through `app.fetch` with
   * what a client adds on the wire (in-process-fetch.ts). Other URLs go to the global fetch over the
   * socket and are refused in-process.
   */
  fetch(input: string | URL, init?: RequestInit): Promise<Response>;
  unhandledErrors(): Record<string, unknown>[];
  /** Rows in the resources table, read through a separate connection. */
  rowCount(): Promise<number>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** The app's clock (AppDeps["clock"]): a test/helpers/fake-clock.ts clock lets a test move time itself. */
  clock?: () => Date;
  /**
   * "socket" (the default, what every test had before there was a choice) or "in-process". Keep the
   * socket for what only a socket shows: raw HTTP framing, Expect: 100-continue, connection close,
   * the Node fast path, streaming timing, and URLs a process outside this one must reach.
   */
  transport?: Transport;
  /**
   * Over a socket: signed links and other absolute URLs built on this server's own URL
   * (CMS_PUBLIC_URL), as a fixed CMS_PORT on loopback gives them, on a port the OS picks. The socket
   * is bound (port 0) before the app is built, so its URL is known without probing for a free port.
   */
  ownPublicUrl?: boolean;
  /**
   * Over a socket: serve on this socket, bound beforehand by `bindLoopback()`, for a test whose
   * settings must name the port before the app exists (CMS_PORT, CMS_CONTENT_ORIGIN, an identity
   * provider's allowed origins) without probing for a free one.
   */
  listenOn?: LoopbackSocket;
}

export async function startTestApp(env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const transport = options.transport ?? "socket";
  const own = options.ownPublicUrl && transport === "socket" && !options.listenOn ? await bindLoopback() : undefined;
  const bound = transport === "socket" ? (options.listenOn ?? own) : undefined;
  const settings = own ? { CMS_PUBLIC_URL: own.url, ...env } : env;
  const dir = await mkdtemp(join(tmpdir(), "cms-test-"));
  const volume = join(dir, "volume");
  const databaseUrl = `file:${join(dir, "cms.db")}`;
  const parsed = parseConfig({
    CMS_VOLUME: volume,
    CMS_DATABASE_URL: databaseUrl,
    CMS_FETCH_ALLOW_PRIVATE: "true", // the test origin lives on 127.0.0.1
    CMS_LOG_LEVEL: "debug",
    ...settings,
  });
  // As bootstrap does: with a fixed CMS_PORT on loopback, signed links default to this server's URL
  // (without one the test server listens on any free port, unknown up front).
  const config = env.CMS_PORT ? withLoopbackPublicUrl(parsed) : parsed;
  const logs: Record<string, unknown>[] = [];
  const logger = createJsonLogger((line) => logs.push(JSON.parse(line)), config.CMS_LOG_LEVEL);
  const deps = await createServerDeps(config, logger, { clock: options.clock });
  const services = createServices(deps);
  const app = createApp(deps, services);
  const served =
    transport === "socket"
      ? await serve(
          createNodeServer({ config, deps, services, logger, app }),
          bound?.socket ?? (env.CMS_PORT ? config.CMS_PORT : 0),
        )
      : undefined;
  const baseUrl = served?.baseUrl ?? IN_PROCESS_ORIGIN;
  const send = served ? fetch : inProcessFetch(app);
  return {
    transport,
    baseUrl,
    dir,
    volume,
    databaseUrl,
    logs,
    deps,
    services,
    app,
    url: (path) => `${baseUrl}${path}`,
    fetch: (input, init) =>
      send(typeof input === "string" && input.startsWith("/") ? `${baseUrl}${input}` : input, init),
    unhandledErrors: () => logs.filter((l) => l.msg === "unhandled error"),
    async rowCount() {
      const client = createClient({ url: databaseUrl });
      try {
        const { rows } = await client.execute("select count(*) as n from resources");
        return Number(rows[0]?.n);
      } finally {
        client.close();
      }
    },
    async close() {
      await served?.close();
      await deps.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Listens on 127.0.0.1 (`port` 0: any free port), or on a socket already bound (Node's
 * `listen(handle)`); the server's URL and how to close it with its connections.
 */
async function serve(server: Server, port: number | NetServer) {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject); // a taken CMS_PORT fails the caller at once, not after a hook timeout
    const listening = () => {
      server.off("error", reject);
      resolve();
    };
    if (typeof port === "number") server.listen(port, "127.0.0.1", listening);
    else server.listen(port, listening);
  });
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const json = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

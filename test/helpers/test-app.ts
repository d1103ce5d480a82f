/**
 * Starts the real app over a real socket on 127.0.0.1 with a temp volume and a temp libSQL file,
 * wired and served as the Node entry does (createServerDeps, createNodeServer with its fast path). Captures log lines so a test can assert
 * that no request ended in an unhandled error.
 */
import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { type App, createApp } from "../../src/app.js";
import { parseConfig, withLoopbackPublicUrl } from "../../src/config.js";
import { createJsonLogger } from "../../src/lib/logger.js";
import { createNodeServer } from "../../src/runtime/node/server.js";
import { createServerDeps } from "../../src/runtime/host/deps.js";
import { createServices, type Services } from "../../src/services/index.js";

export interface TestApp {
  baseUrl: string;
  dir: string;
  volume: string;
  databaseUrl: string;
  logs: Record<string, unknown>[];
  deps: Awaited<ReturnType<typeof createServerDeps>>;
  services: Services;
  app: App;
  url(path: string): string;
  unhandledErrors(): Record<string, unknown>[];
  /** Rows in the resources table, read through a separate connection. */
  rowCount(): Promise<number>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** The app's clock (AppDeps["clock"]): a test/helpers/fake-clock.ts clock lets a test move time itself. */
  clock?: () => Date;
}

export async function startTestApp(env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const dir = await mkdtemp(join(tmpdir(), "cms-test-"));
  const volume = join(dir, "volume");
  const databaseUrl = `file:${join(dir, "cms.db")}`;
  const parsed = parseConfig({
    CMS_VOLUME: volume,
    CMS_DATABASE_URL: databaseUrl,
    CMS_FETCH_ALLOW_PRIVATE: "true", // the test origin lives on 127.0.0.1
    CMS_LOG_LEVEL: "debug",
    ...env,
  });
  // As bootstrap does: with a fixed CMS_PORT on loopback, signed links default to this server's URL
  // (without one the test server listens on any free port, unknown up front).
  const config = env.CMS_PORT ? withLoopbackPublicUrl(parsed) : parsed;
  const logs: Record<string, unknown>[] = [];
  const logger = createJsonLogger((line) => logs.push(JSON.parse(line)), config.CMS_LOG_LEVEL);
  const deps = await createServerDeps(config, logger, { clock: options.clock });
  const services = createServices(deps);
  const app = createApp(deps, services);
  const server = createNodeServer({ config, deps, services, logger, app });
  // CMS_PORT only when a test needs a known port up front (e.g. for an IdP redirect URI).
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject); // a taken CMS_PORT fails the caller at once, not after a hook timeout
    server.listen(env.CMS_PORT ? config.CMS_PORT : 0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    dir,
    volume,
    databaseUrl,
    logs,
    deps,
    services,
    app,
    url: (path) => `${baseUrl}${path}`,
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
      await new Promise<void>((resolve) => {
        if ("closeAllConnections" in server) server.closeAllConnections();
        server.close(() => resolve());
      });
      await deps.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A port that was free a moment ago on 127.0.0.1, taken from below the kernel's ephemeral range: a
 * port from `listen(0)` would be handed again to the next `listen(0)` or outgoing connection of any
 * parallel test before the caller binds it (seen in CI: EADDRINUSE on a fixed CMS_PORT).
 */
export async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  const { readFile } = await import("node:fs/promises");
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

export const json = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

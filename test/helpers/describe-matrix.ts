/**
 * One spec set, run against every way the app is served (after h3's `describeMatrix`): in-process
 * through `app.fetch` (the reference), over a socket by the Node entry's server (createNodeServer, its
 * getData fast path in front of the app), and over a socket by the Bun entry (`bun src/bun.ts`, its
 * own fast path and sender). The specs see only `url`/`fetch`, so each runtime answers the same
 * requests and is held to the same assertions.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect } from "vitest";
import { spawnServer } from "./spawn-server.js";
import { startTestApp } from "./test-app.js";

export type MatrixRuntime = "in-process" | "node" | "bun";
export const MATRIX_RUNTIMES: readonly MatrixRuntime[] = ["in-process", "node", "bun"];

export interface MatrixContext {
  runtime: MatrixRuntime;
  url(path: string): string;
  fetch(input: string | URL, init?: RequestInit): Promise<Response>;
}

interface Served {
  url(path: string): string;
  fetch(input: string | URL, init?: RequestInit): Promise<Response>;
  /** Log lines of requests that ended in an unhandled error. */
  unhandledErrors(): unknown[];
  close(): Promise<void>;
}

/** The app served by `runtime`, over a fresh temp volume and libSQL file, with `env`. */
async function serve(runtime: MatrixRuntime, env: Record<string, string>): Promise<Served> {
  if (runtime !== "bun") return startTestApp(env, { transport: runtime === "node" ? "socket" : "in-process" });
  const dir = await mkdtemp(join(tmpdir(), "cms-matrix-"));
  const server = await spawnServer(
    { CMS_VOLUME: join(dir, "volume"), CMS_DATABASE_URL: `file:${join(dir, "cms.db")}`, ...env },
    "bun",
  );
  return {
    url: (path) => `${server.url}${path}`,
    fetch: (input, init) =>
      fetch(typeof input === "string" && input.startsWith("/") ? `${server.url}${input}` : input, init),
    unhandledErrors: () => server.stdout.filter((line) => line.includes('"msg":"unhandled error"')),
    async close() {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** `title` › runtime › the specs `fn` registers, once per runtime, each on its own server. */
export function describeMatrix(
  title: string,
  fn: (ctx: MatrixContext) => void,
  options: { env?: Record<string, string>; runtimes?: readonly MatrixRuntime[] } = {},
): void {
  describe(title, () => {
    for (const runtime of options.runtimes ?? MATRIX_RUNTIMES) {
      describe(runtime, () => {
        let served: Served | undefined;
        const ctx: MatrixContext = {
          runtime,
          url: (path) => (served as Served).url(path),
          fetch: (input, init) => (served as Served).fetch(input, init),
        };
        beforeAll(async () => {
          served = await serve(runtime, options.env ?? {});
        }, 60_000);
        afterAll(() => served?.close());
        afterEach(() => expect(served?.unhandledErrors()).toEqual([]));
        fn(ctx);
      });
    }
  });
}

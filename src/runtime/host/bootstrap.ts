/**
 * Start-up shared by the Node and Bun entry points: environment → config → deps → app, served by the
 * entry's `serve` (runtime/node/serve.ts, runtime/bun/server.ts) in this process or in CMS_WORKERS
 * cluster workers (workers.ts), and the one-line fatal report (exit code 1) when a setting, the
 * volume, the database or the listening address is unusable.
 */
import cluster from "node:cluster";
import { createApp } from "../../app.js";
import { ConfigError, parseConfig, withLoopbackPublicUrl } from "../../config.js";
import { createJsonLogger } from "../../lib/logger.js";
import { unavailableCause } from "../../metadata/database-errors.js";
import { createServices } from "../../services/index.js";
import { batchedLines } from "./batched-lines.js";
import { createServerDeps } from "./deps.js";
import { instanceIdOf } from "./instance-id.js";
import { isPrimaryOf, runPrimary, workerCount, workerSlot } from "./workers.js";

/** Workers share the primary's stdout: each write must stay within PIPE_BUF. */
const PIPE_BUF = 4096;
const stdout = batchedLines((chunk) => process.stdout.write(chunk), cluster.isWorker ? PIPE_BUF : undefined, {
  // Which of the two ways to fill a batch is the faster depends on the engine (batched-lines.ts).
  copyAscii: process.versions.bun !== undefined,
});
// Every way out (process.exit included) writes what is still pending; stdout is synchronous here.
process.on("exit", stdout.flush);

/** Starts serving: as one process with `serve` (Node passes node:http, Bun passes Bun.serve), or as CMS_WORKERS processes. */
export async function start(
  env: Record<string, string | undefined>,
  runtime: string,
  serve: (started: Bootstrapped, runtime: string) => void,
) {
  const config = parseConfig(env);
  const count = workerCount(config.CMS_WORKERS, runtime);
  if (isPrimaryOf(count)) {
    const base = { instance: instanceIdOf(config) };
    await runPrimary(config, count, createJsonLogger(stdout, config.CMS_LOG_LEVEL, undefined, base));
  } else serve(await bootstrap(env), runtime);
}

export async function bootstrap(env: Record<string, string | undefined>) {
  const config = withLoopbackPublicUrl(parseConfig(env));
  const slot = workerSlot(env);
  // Every line says which instance (and worker process) wrote it: several share one log store.
  const instance = instanceIdOf(config);
  const logger = createJsonLogger(
    stdout,
    config.CMS_LOG_LEVEL,
    undefined,
    slot === undefined ? { instance } : { instance, worker: slot },
  );
  const deps = await createServerDeps(config, logger, { collectBlobs: slot === undefined || slot === 1 });
  const services = createServices(deps);
  return { config, logger, deps, services, app: createApp(deps, services) };
}

export type Bootstrapped = Awaited<ReturnType<typeof bootstrap>>;

export function fail(err: unknown): never {
  // An unreachable database says what failed, not which start-up statement met it (a multi-line CREATE).
  const cause = unavailableCause(err) ?? err;
  const message =
    err instanceof ConfigError
      ? err.message
      : `cannot start: ${cause instanceof Error ? cause.message : String(cause)}`;
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

/** The "listening" log line; tests and operators read the URL from it. */
export function logListening({ config, logger }: Bootstrapped, url: string, runtime: string) {
  logger.info("listening", {
    url,
    // The pages for people, so a first run needs no guessing.
    explorer: `${url}/docs`,
    library: `${url}/library`,
    runtime,
    ...blobsAt(config),
    database: config.CMS_DATABASE_URL.replace(/\/\/[^@/]*@/, "//***@"),
    auth: config.CMS_AUTH_ENABLED,
  });
}

/** Where blobs live, for the listening line: on S3 the bucket and prefix, not the unused CMS_VOLUME. */
function blobsAt(config: Bootstrapped["config"]) {
  if (config.CMS_STORAGE !== "s3") return { storage: "fs", volume: config.CMS_VOLUME };
  return {
    storage: "s3",
    bucket: config.CMS_S3_BUCKET,
    prefix: config.CMS_S3_PREFIX ?? "",
    endpoint: config.CMS_S3_ENDPOINT?.replace(/\/\/[^@/]*@/, "//***@"),
  };
}

/** How long after listening libvips is loaded: past the cold-start window, long before most first image requests. */
const WARM_IMAGES_AFTER_MS = 1000;

/**
 * Loads the image library (sharp, libvips) a moment after listening. Loading it took 100–340 ms,
 * paid by the first image request (the images bench's p99); loaded at start-up instead, it would
 * delay the first answer of every start. A request arriving during the load waits for it once.
 * It costs about 14 MiB of memory, and 8 MiB more for the first image source buffer
 * (source-buffers.ts), made then too: CMS_IMAGE_WARMUP=false leaves both to the first image request.
 */
export function warmImages({ config, deps, logger }: Bootstrapped) {
  const warm = deps.images?.warm;
  if (!warm) return;
  setTimeout(() => {
    // Said at the moment it would have loaded: what shows that turning it off left libvips unloaded.
    if (!config.CMS_IMAGE_WARMUP) return logger.debug("image warm-up skipped", { reason: "CMS_IMAGE_WARMUP=false" });
    warm().catch((err: unknown) => logger.warn("image library failed to load", { error: err }));
  }, WARM_IMAGES_AFTER_MS).unref();
}

/** The longest a stop may take before the process exits anyway (container runtimes kill at 10 s). */
const STOP_DEADLINE_MS = 5000;

/**
 * Stops on SIGINT/SIGTERM: `close` stops accepting and waits for the answers in flight, then the
 * database closes ("stopped"); 5 s at most ("stop deadline"). Later signals change nothing (a worker
 * gets Ctrl-C's SIGINT from the terminal and again from its primary).
 */
export function stopOnSignals({ logger, deps }: Bootstrapped, close: () => Promise<void>) {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info("stopping", { signal });
    // A slow client must not hold the shutdown forever.
    setTimeout(() => {
      logger.warn("stop deadline", { afterMs: STOP_DEADLINE_MS });
      process.exit(0);
    }, STOP_DEADLINE_MS).unref();
    void close()
      .then(() => deps.close())
      .then(() => logger.info("stopped"))
      .finally(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

/**
 * The HTTP acceptance suite on workerd: the Worker bundled exactly as for deployment (`wrangler
 * deploy --dry-run --outdir`), run by Miniflare on 127.0.0.1:0 with in-memory R2 and D1 bindings
 * and the assets directory, D1 migrated from drizzle/ first.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { drizzle } from "drizzle-orm/d1";
import { migrate } from "drizzle-orm/d1/migrator";
import { Miniflare } from "miniflare";
import { describeAcceptance, PUBLIC_URL } from "./suite.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const WRANGLER = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
// Must match wrangler.toml: the bundle is the deployed one, the runtime options mirror its settings.
const COMPATIBILITY_DATE = "2026-04-01";

/** Bundles src/worker.ts as `wrangler deploy` would (its [build] step vendors the explorer assets). */
async function bundleWorker(outdir: string): Promise<string> {
  await promisify(execFile)(process.execPath, [WRANGLER, "deploy", "--dry-run", "--outdir", outdir], {
    cwd: ROOT,
    env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" },
    timeout: 60_000,
  });
  return join(outdir, "worker.js");
}

describeAcceptance("workerd", async () => {
  const dir = await mkdtemp(join(tmpdir(), "cms-workerd-"));
  try {
    const scriptPath = await bundleWorker(join(dir, "bundle"));
    const mf = new Miniflare({
      modules: true,
      scriptPath,
      modulesRoot: join(dir, "bundle"), // module names are relative to it (the default, the cwd, is not above /tmp)
      compatibilityDate: COMPATIBILITY_DATE,
      host: "127.0.0.1",
      port: 0,
      cf: false, // no download of Cloudflare's request metadata (offline)
      r2Buckets: ["BLOBS"],
      d1Databases: ["DB"],
      assets: {
        directory: join(ROOT, "public"),
        binding: "ASSETS",
        routerConfig: { has_user_worker: true, invoke_user_worker_ahead_of_assets: true },
      },
      bindings: {
        CMS_FETCH_ALLOW_PRIVATE: "true", // the test origin lives on 127.0.0.1
        CMS_LINK_SECRET: "a-link-secret-of-at-least-32-characters!",
        CMS_LOG_LEVEL: "warn",
        CMS_PUBLIC_URL: PUBLIC_URL,
      },
    });
    const url = await mf.ready;
    // One migration mechanism for this (fresh, in-memory) database: drizzle's D1 migrator over the same SQL.
    await migrate(drizzle(await mf.getD1Database("DB")), { migrationsFolder: join(ROOT, "drizzle") });
    return {
      baseUrl: url.origin,
      async close() {
        await mf.dispose();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
});

/**
 * Runs once before the Node-side tests: builds dist/node/server.mjs, the server `npm start` runs, the
 * /library page's script, dist/cli/cms.mjs, the bundle bin/cms.mjs runs (the CLI tests start dozens
 * of `cms` processes: ~0.2 s of CPU each instead of ~0.8 s through tsx), and the Worker as `wrangler
 * deploy` bundles it (six files start workerd: bundling it once saves each of them a wrangler run).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { buildCli, buildLibraryClient, buildServer } from "../scripts/build.mjs";
import { bundleWorker } from "./helpers/workerd.js";

export default async function setup(project: TestProject) {
  await Promise.all([buildServer(), buildLibraryClient(), buildCli()]);
  const dir = await mkdtemp(join(tmpdir(), "cms-worker-bundle-"));
  project.provide("workerBundleDir", (await bundleWorker(dir)).modulesRoot);
  return () => rm(dir, { recursive: true, force: true });
}

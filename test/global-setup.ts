/**
 * Runs once before the Node-side tests: builds dist/node/server.mjs, the server `npm start` runs, the
 * /library page's script, and the Worker as `wrangler deploy` bundles it (six files start workerd:
 * bundling it once saves each of them a wrangler run).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { buildLibraryClient, buildServer } from "../scripts/build.mjs";
import { bundleWorker } from "./helpers/workerd.js";

export default async function setup(project: TestProject) {
  await Promise.all([buildServer(), buildLibraryClient()]);
  const dir = await mkdtemp(join(tmpdir(), "cms-worker-bundle-"));
  project.provide("workerBundleDir", (await bundleWorker(dir)).modulesRoot);
  return () => rm(dir, { recursive: true, force: true });
}

/**
 * Runs once before the Node-side tests: builds dist/node/server.mjs, the server `npm start` runs, the
 * /library page's script, dist/cli/cms.mjs, the bundle bin/cms.mjs runs (the CLI tests start dozens
 * of `cms` processes: ~0.2 s of CPU each instead of ~0.8 s through tsx), and the Worker as `wrangler
 * deploy` bundles it (six files start workerd: bundling it once saves each of them a wrangler run).
 * Two projects use it (node, and the heavy lane): the builds are shared through the vitest process,
 * so a run makes them once, and the bundle's folder goes when the last project using it is done.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { buildCli, buildLibraryClient, buildServer } from "../scripts/build.mjs";
import { bundleWorker } from "./helpers/workerd.js";

type Built = { dir: string; modulesRoot: string };
const shared = globalThis as { cmsTestBuild?: Promise<Built>; cmsTestBuildUsers?: number };

async function build(): Promise<Built> {
  await Promise.all([buildServer(), buildLibraryClient(), buildCli()]);
  const dir = await mkdtemp(join(tmpdir(), "cms-worker-bundle-"));
  return { dir, modulesRoot: (await bundleWorker(dir)).modulesRoot };
}

export default async function setup(project: TestProject) {
  shared.cmsTestBuildUsers = (shared.cmsTestBuildUsers ?? 0) + 1;
  const built = (shared.cmsTestBuild ??= build());
  project.provide("workerBundleDir", (await built).modulesRoot);
  return async () => {
    shared.cmsTestBuildUsers = (shared.cmsTestBuildUsers ?? 1) - 1;
    if (shared.cmsTestBuildUsers > 0) return;
    shared.cmsTestBuild = undefined;
    await rm((await built).dir, { recursive: true, force: true });
  };
}

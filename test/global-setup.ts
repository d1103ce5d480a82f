/**
 * Runs once before the Node-side tests: builds dist/node/server.mjs, the server `npm start` runs, the
 * /library page's script, and dist/cli/cms.mjs, the bundle bin/cms.mjs runs (the CLI tests start
 * dozens of `cms` processes: ~0.2 s of CPU each instead of ~0.8 s through tsx).
 */
import { buildCli, buildLibraryClient, buildServer } from "../scripts/build.mjs";

export default async function setup() {
  await Promise.all([buildServer(), buildLibraryClient(), buildCli()]);
}

/** Runs once before the Node-side tests: builds dist/node/server.mjs, the server `npm start` runs, and the /library page's script. */
import { buildLibraryClient, buildServer } from "../scripts/build.mjs";

export default async function setup() {
  await Promise.all([buildServer(), buildLibraryClient()]);
}

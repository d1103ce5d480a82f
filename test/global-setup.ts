/** Runs once before the Node-side tests: builds dist/node/server.mjs, the server `npm start` runs. */
import { buildServer } from "../scripts/build.mjs";

export default async function setup() {
  await buildServer();
}

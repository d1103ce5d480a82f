// The "zod" of the bundles (wrangler.toml [alias] for the Worker, scripts/build.mjs for Node): zod's
// classic API as `zod/v4/classic/external.js` exports it, minus what the app never uses — the
// `locales` and `core` namespaces, z.compile and z.fromJSONSchema (lean-zod-exports.mjs).
// @hono/zod-openapi passes the whole `z` namespace to a function, so a bundler must keep every
// export of it, and `z.locales` alone is zod's ~50 translations of its error messages (≈ 260 KiB
// minified). English is registered by ZodType itself (classic/schemas.js), so messages are unchanged.
// test/runtime/worker-bundle.test.ts checks this API against zod's and that src/ uses none of the rest.
import * as z from "./lean-zod-exports.mjs";
export * from "./lean-zod-exports.mjs";
export { z, z as default };

// The Worker's "zod" (wrangler.toml [alias]): zod's classic API exactly as `zod/v4/classic/external.js`
// exports it, minus the `locales` and `core` namespaces. @hono/zod-openapi passes the whole `z`
// namespace to a function, so a bundler must keep every export of it — and `z.locales` holds zod's
// ~50 translations of its error messages (≈ 260 KiB unminified). Nothing here uses them: English is
// registered by ZodType itself (classic/schemas.js), and the app never calls z.config(z.locales…).
import * as z from "./zod-classic.mjs";
export * from "./zod-classic.mjs";
export { z, z as default };

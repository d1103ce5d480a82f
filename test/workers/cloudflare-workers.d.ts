// `cloudflare:workers` as the workerd tests use it. Declared here so test/workers type-checks with
// the main tsconfig (DOM + Node), like the shared conformance suite it runs; the Workers runtime
// types (tsconfig.worker.json) declare TextEncoder differently and would reject that suite.
declare module "cloudflare:workers" {
  import type { WorkerBindings } from "../../src/runtime/worker/deps.js";

  /** The bindings and vars of wrangler.toml, as Miniflare provides them to the tests. */
  export const env: Required<WorkerBindings> & Record<string, unknown>;
  /** The main module's exports (src/worker.ts), running in the test's isolate. */
  export const exports: { default: { fetch(request: Request): Promise<Response> } };
}

// `cloudflare:test`: only what the tests use (the pool's own types need the Workers tsconfig).
declare module "cloudflare:test" {
  /** Applies the migrations the config read with readD1Migrations (vitest.workers.config.ts). */
  export function applyD1Migrations(db: unknown, migrations: unknown, migrationsTableName?: string): Promise<void>;
}

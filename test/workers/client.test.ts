/**
 * The typed client runs inside workerd too (fetch only): here against the Worker itself (its
 * fetch handler as the client's fetch), with R2 and D1 — upload a stream, download it verified
 * with a Range resume, a typed problem.
 */
import { env, exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { CmsProblem, createCmsClient, Sha256 } from "../../src/client/index.js";

declare global {
  // Vite's import.meta.glob (vite is not a direct dependency, so its client types are not at hand).
  interface ImportMeta {
    glob<T>(pattern: string, options: { query: string; import: string; eager: true }): Record<string, T>;
  }
}

// The pool does not migrate D1; Vite inlines drizzle/'s SQL here, applied in file order.
const MIGRATIONS = import.meta.glob<string>("../../drizzle/*.sql", { query: "?raw", import: "default", eager: true });
beforeAll(async () => {
  const db = (
    env as unknown as { DB: { prepare(sql: string): unknown; batch(statements: unknown[]): Promise<unknown> } }
  ).DB;
  for (const file of Object.keys(MIGRATIONS).sort()) {
    const statements = MIGRATIONS[file]!.split("--> statement-breakpoint")
      .map((sql) => sql.trim())
      .filter(Boolean);
    await db.batch(statements.map((sql) => db.prepare(sql)));
  }
});

const cms = createCmsClient({
  baseUrl: "http://worker.test",
  fetch: (input) => exports.default.fetch(input as Request) as Promise<Response>,
});
const bytes = new Uint8Array(100_000).map((_, i) => (i * 31) % 251);

describe("the typed client in workerd", () => {
  it("uploads a stream and downloads it verified, resuming with Range", async () => {
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < bytes.length; i += 8192) c.enqueue(bytes.slice(i, i + 8192));
        c.close();
      },
    });
    const created = await cms.upload(
      {
        resourceTenantId: "wk",
        resourceAuthor: "w",
        resourceName: "w.bin",
        resourceMediaType: "application/octet-stream",
      },
      body,
    );
    expect(created.size).toBe(bytes.length);
    const held = 40_000;
    const dl = await cms.download(created.resourceURI, {
      offset: held,
      hash: new Sha256().update(bytes.subarray(0, held)),
      etag: `"${created.sha256}"`,
    });
    expect(dl.start).toBe(held);
    expect(new Uint8Array(await new Response(dl.body).arrayBuffer())).toEqual(bytes.subarray(held));
  }, 90_000); // workerd under load: 22 s seen with the 30 s default

  it("throws typed problems", async () => {
    const err = await cms.queryResource("01m8505ec2gjyhk5ep8jcs5dwayf7d-wk").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CmsProblem);
    expect((err as CmsProblem).problem).toMatchObject({ status: 404, code: "NOT_FOUND" });
  });
});

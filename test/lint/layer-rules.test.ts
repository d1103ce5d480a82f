/**
 * The layer rules in biome.jsonc, checked by breaking each one. A copy of src/ (with biome.jsonc,
 * package.json and .gitignore, which the config's vcs settings read) goes into a git-ignored folder
 * under the repo; one planted file per rule imports what that rule forbids, and `biome lint` must
 * name that file with that rule. A pattern that stops matching (as "../*" did for nested paths)
 * fails here instead of letting the layers leak silently. The copy without plants must lint clean.
 */
import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIOME = join(ROOT, "node_modules/.bin/biome");

/** One forbidden import: the file it is planted in, its source, and the rule that must name it. */
interface Plant {
  rule: string;
  file: string;
  source: string;
  diagnostic: "lint/style/noRestrictedImports" | "lint/correctness/noNodejsModules";
}

const restricted = "lint/style/noRestrictedImports" as const;
const PLANTS: Plant[] = [
  // two segments deep: "../*" let exactly this through.
  {
    rule: "client → server module",
    file: "src/client/planted.ts",
    source: `import { parseETag } from "../http/etag.js";\nexport const x = parseETag;\n`,
    diagnostic: restricted,
  },
  {
    rule: "client → problems",
    file: "src/client/planted-problems.ts",
    source: `import { ProblemError } from "../problems.js";\nexport const x = ProblemError;\n`,
    diagnostic: restricted,
  },
  {
    rule: "client re-exports a server module",
    file: "src/client/planted-reexport.ts",
    source: `export { ProblemError } from "../problems.js";\n`,
    diagnostic: restricted,
  },
  {
    rule: "client imports a server module lazily",
    file: "src/client/planted-dynamic.ts",
    source: `export const load = () => import("../http/etag.js");\n`,
    diagnostic: restricted,
  },
  {
    rule: "lib → app",
    file: "src/lib/planted.ts",
    source: `import { ProblemError } from "../problems.js";\nexport const x = ProblemError;\n`,
    diagnostic: restricted,
  },
  {
    rule: "lib → app (nested)",
    file: "src/lib/planted-nested.ts",
    source: `import { parseETag } from "../http/etag.js";\nexport const x = parseETag;\n`,
    diagnostic: restricted,
  },
  {
    rule: "services → http",
    file: "src/services/planted.ts",
    source: `import { parseETag } from "../http/etag.js";\nexport const x = parseETag;\n`,
    diagnostic: restricted,
  },
  {
    rule: "zip → problems",
    file: "src/zip/planted.ts",
    source: `import { ProblemError } from "../problems.js";\nexport const x = ProblemError;\n`,
    diagnostic: restricted,
  },
  {
    rule: "http protocol helper → services",
    file: "src/http/planted.ts",
    source: `import { versionOf } from "../services/revisions.js";\nexport const x = versionOf;\n`,
    diagnostic: restricted,
  },
  {
    rule: "http middleware → delivery",
    file: "src/http/middleware/planted.ts",
    source: `import { contentAnswers } from "../../delivery/decide.js";\nexport const x = contentAnswers;\n`,
    diagnostic: restricted,
  },
  {
    rule: "http → routes",
    file: "src/http/planted-routes.ts",
    source: `import { API_PREFIX } from "../routes/meta.js";\nexport const x = API_PREFIX;\n`,
    diagnostic: restricted,
  },
  {
    rule: "http → images (beyond its coded errors)",
    file: "src/http/planted-images.ts",
    source: `import { IMAGE_QUERY } from "../images/params.js";\nexport const x = IMAGE_QUERY;\n`,
    diagnostic: restricted,
  },
  {
    rule: "http → metadata (beyond its coded errors)",
    file: "src/http/planted-metadata.ts",
    source: `import type { ResourceRow } from "../metadata/schema.js";\nexport type X = ResourceRow;\n`,
    diagnostic: restricted,
  },
  {
    rule: "images → problems",
    file: "src/images/planted.ts",
    source: `import { ProblemError } from "../problems.js";\nexport const x = ProblemError;\n`,
    diagnostic: restricted,
  },
  {
    rule: "images → http",
    file: "src/images/planted-http.ts",
    source: `import { CONTENT_VARY } from "../http/cache-policy.js";\nexport const x = CONTENT_VARY;\n`,
    diagnostic: restricted,
  },
  {
    rule: "images → hono",
    file: "src/images/planted-hono.ts",
    source: `import { HTTPException } from "hono/http-exception";\nexport const x = HTTPException;\n`,
    diagnostic: restricted,
  },
  {
    rule: "node runtime → driver internals",
    file: "src/runtime/node/planted.ts",
    source: `import { S3Client } from "../../storage/drivers/s3/client.js";\nexport const x = S3Client;\n`,
    diagnostic: restricted,
  },
  {
    rule: "process host → driver utilities",
    file: "src/runtime/host/planted.ts",
    source: `import { ioWrappers } from "../../storage/drivers/utils/io-errors.js";\nexport const x = ioWrappers;\n`,
    diagnostic: restricted,
  },
  {
    rule: "worker runtime → process host",
    file: "src/runtime/worker/planted-host.ts",
    source: `import { openDatabase } from "../host/database.js";\nexport const x = openDatabase;\n`,
    diagnostic: restricted,
  },
  {
    rule: "bun runtime → driver helper",
    file: "src/runtime/bun/planted.ts",
    source: `import { claimTempDir } from "../../storage/drivers/fs/temp.js";\nexport const x = claimTempDir;\n`,
    diagnostic: restricted,
  },
  {
    rule: "bun runtime → node runtime",
    file: "src/runtime/bun/planted-node.ts",
    source: `import { sendFile } from "../node/send-file.js";\nexport const x = sendFile;\n`,
    diagnostic: restricted,
  },
  {
    rule: "node runtime → bun runtime",
    file: "src/runtime/node/planted-bun.ts",
    source: `import { bunApi } from "../bun/bun-api.js";\nexport const x = bunApi;\n`,
    diagnostic: restricted,
  },
  {
    rule: "node runtime → bun runtime (from the root)",
    file: "src/runtime/node/planted-bun-deep.ts",
    source: `import { bunApi } from "../../runtime/bun/bun-api.js";\nexport const x = bunApi;\n`,
    diagnostic: restricted,
  },
  {
    rule: "worker runtime → driver kit",
    file: "src/runtime/worker/planted.ts",
    source: `import { checkRange } from "../../storage/drivers/utils/driver-kit.js";\nexport const x = checkRange;\n`,
    diagnostic: restricted,
  },
  {
    rule: "node: in the core",
    file: "src/services/planted-node.ts",
    source: `import { readFile } from "node:fs/promises";\nexport const x = readFile;\n`,
    diagnostic: "lint/correctness/noNodejsModules",
  },
  {
    rule: "jose outside auth",
    file: "src/services/planted-jose.ts",
    source: `import { jwtVerify } from "jose";\nexport const x = jwtVerify;\n`,
    diagnostic: restricted,
  },
  {
    rule: "drizzle outside metadata",
    file: "src/routes/planted-drizzle.ts",
    source: `import { eq } from "drizzle-orm";\nexport const x = eq;\n`,
    diagnostic: restricted,
  },
];

/** Runs biome in `dir`; the exit code and the (file, rule) pairs of its GitHub-format report. */
function lint(dir: string): Promise<{ code: number; found: { file: string; rule: string }[]; output: string }> {
  return new Promise((resolve) => {
    execFile(
      BIOME,
      ["lint", "--colors=off", "--error-on-warnings", "--reporter=github", "--max-diagnostics=none"],
      { cwd: dir },
      (error, stdout, stderr) => {
        const found = [...stdout.matchAll(/^::(?:error|warning) title=([^,]+),file=([^,]+),/gm)].map((m) => ({
          rule: m[1] as string,
          file: (m[2] as string).startsWith(dir) ? (m[2] as string).slice(dir.length + 1) : (m[2] as string),
        }));
        resolve({ code: error ? Number(error.code ?? 1) : 0, found, output: stdout + stderr });
      },
    );
  });
}

let dir: string;
beforeAll(async () => {
  // Under the repo (git-ignored .tmp/), so the copy resolves like the real tree and the real lint never sees it.
  await mkdir(join(ROOT, ".tmp"), { recursive: true });
  dir = await mkdtemp(join(ROOT, ".tmp", "lint-"));
  for (const entry of ["src", "biome.jsonc", "package.json", ".gitignore"])
    await cp(join(ROOT, entry), join(dir, entry), { recursive: true });
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("layer rules hold (biome.jsonc)", () => {
  it("a copy of src/ without plants lints clean", { timeout: 60_000 }, async () => {
    const { code, found, output } = await lint(dir);
    expect(found, output).toEqual([]);
    expect(code, output).toBe(0);
  });

  it("each planted forbidden import is reported by its rule, and nothing else is", { timeout: 60_000 }, async () => {
    for (const plant of PLANTS) await writeFile(join(dir, plant.file), plant.source);
    const { code, found, output } = await lint(dir);
    expect(code, output).not.toBe(0);
    for (const plant of PLANTS) {
      expect(found, `${plant.rule}: ${plant.file} not reported\n${output}`).toContainEqual({
        file: plant.file,
        rule: plant.diagnostic,
      });
    }
    const planted = new Set(PLANTS.map((p) => p.file));
    expect(
      found.filter((f) => !planted.has(f.file)),
      output,
    ).toEqual([]);
  });
});

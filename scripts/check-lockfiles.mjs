// Checks that package.json pins exact versions and that bun.lock and package-lock.json agree
// with it, so `npm ci` and `bun install --frozen-lockfile` install the same top-level versions.
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const pkg = JSON.parse(readFileSync("package.json", "utf8"));
const npmLock = JSON.parse(readFileSync("package-lock.json", "utf8"));
const problems = [];

for (const section of ["dependencies", "devDependencies", "optionalDependencies"]) {
  for (const [name, version] of Object.entries(pkg[section] ?? {})) {
    if (!/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(version)) problems.push(`${name}@${version} is not an exact pin`);
    const locked = npmLock.packages?.[`node_modules/${name}`]?.version;
    if (locked !== version) problems.push(`package-lock.json has ${name}@${locked}, package.json pins ${version}`);
  }
}

// bun refuses a frozen install when bun.lock does not match package.json; run it on a copy so
// nothing is written here.
// The pinned devDependency `bun` (npm ci installs it), so the check needs nothing else.
const bun = join(process.cwd(), "node_modules/.bin/bun");
const scratch = mkdtempSync(join(tmpdir(), "bun-lock-"));
try {
  for (const f of ["package.json", "bun.lock"]) cpSync(f, join(scratch, f));
  execFileSync(bun, ["install", "--frozen-lockfile", "--lockfile-only"], { cwd: scratch, stdio: "pipe" });
  const lock = readFileSync(join(scratch, "bun.lock"), "utf8");
  for (const section of ["dependencies", "devDependencies", "optionalDependencies"]) {
    for (const [name, version] of Object.entries(pkg[section] ?? {})) {
      if (!lock.includes(`"${name}": ["${name}@${version}"`))
        problems.push(`bun.lock does not resolve ${name}@${version}`);
    }
  }
} catch (err) {
  problems.push(`bun install --frozen-lockfile failed: ${err.stderr?.toString().trim() || err.message}`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

// The pinned tool project (tools/openapi-gen, npm only): exact pins its own lock agrees with.
const toolPkg = JSON.parse(readFileSync("tools/openapi-gen/package.json", "utf8"));
const toolLock = JSON.parse(readFileSync("tools/openapi-gen/package-lock.json", "utf8"));
for (const [name, version] of Object.entries(toolPkg.dependencies)) {
  if (!/^\d+\.\d+\.\d+$/.test(version)) problems.push(`tools/openapi-gen: ${name}@${version} is not an exact pin`);
  const locked = toolLock.packages?.[`node_modules/${name}`]?.version;
  if (locked !== version)
    problems.push(`tools/openapi-gen/package-lock.json has ${name}@${locked}, package.json pins ${version}`);
}

if (problems.length) {
  console.error(`lockfiles out of sync:\n- ${problems.join("\n- ")}`);
  process.exit(1);
}
console.log("lockfiles in sync: package.json pins, package-lock.json and bun.lock agree");

// Makes sure Debian's Chromium is present for the browser tests: installs it with apt when this
// machine lacks it and we may (root), otherwise says exactly what to run.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
if (!existsSync(CHROMIUM)) {
  if (process.getuid?.() !== 0) {
    console.error(`browser tests need ${CHROMIUM}: run  sudo apt-get update && sudo apt-get install -y chromium`);
    process.exit(1);
  }
  console.log("installing Debian's chromium for the browser tests (once) …");
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit", env });
  execFileSync("apt-get", ["install", "-y", "-qq", "chromium"], { stdio: ["ignore", "ignore", "inherit"], env });
}

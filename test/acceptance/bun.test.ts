/** The HTTP acceptance suite on Bun: `bun src/bun.ts` as a real process on 127.0.0.1:0, fs + libSQL file. */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describeAcceptance, PUBLIC_URL } from "./suite.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
// The pinned devDependency `bun` that `npm ci` installs: the suite needs no Bun of the machine's own.
const BUN = join(ROOT, "node_modules", ".bin", "bun");

/** Spawns the Bun entry and resolves with the URL of its `listening` log line (or rejects with its stderr). */
function startBun(env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(BUN, ["src/bun.ts"], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", CMS_HOST: "127.0.0.1", CMS_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`bun did not start within 20 s: ${stderr}`));
    }, 20_000);
    let buffer = "";
    child.stdout?.on("data", (d: Buffer) => {
      buffer += d.toString();
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        const parsed = JSON.parse(line) as { msg?: string; url?: string };
        if (parsed.msg === "listening" && parsed.url) {
          clearTimeout(timer);
          resolve({ url: parsed.url, child });
        }
      }
    });
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${BUN} (run npm ci: bun is a devDependency): ${err.message}`));
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`bun exited (${code}) before listening: ${stderr}`));
    });
  });
}

describeAcceptance("bun", async () => {
  const dir = await mkdtemp(join(tmpdir(), "cms-bun-"));
  const { url, child } = await startBun({
    CMS_VOLUME: join(dir, "volume"),
    CMS_DATABASE_URL: `file:${join(dir, "cms.db")}`,
    CMS_FETCH_ALLOW_PRIVATE: "true", // the test origin lives on 127.0.0.1
    CMS_LOG_LEVEL: "info", // the URL comes from the `listening` info line
    CMS_PUBLIC_URL: PUBLIC_URL,
  });
  return {
    baseUrl: url,
    async close() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
        await exited;
        clearTimeout(timer);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
});

/**
 * A second process holding SQLite's write lock on a database file — what another instance sharing
 * the file does during a long write. It runs `BEGIN IMMEDIATE`, reports, and commits after `holdMs`
 * or when told to (`release()`): a test that lifts the lock itself waits for nothing it cannot see.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

const SCRIPT = `
const Database = require("libsql");
const db = new Database(process.argv[1]);
db.exec("BEGIN IMMEDIATE");
process.stdout.write("held\\n");
let done = false;
const release = () => { if (done) return; done = true; db.exec("COMMIT"); db.close(); process.stdout.write("released\\n"); process.exit(0); };
const holdMs = Number(process.argv[2]);
if (holdMs > 0) setTimeout(release, holdMs);
process.stdin.on("data", release).on("end", release);
`;

export interface WriteLockHolder {
  /** Resolves once the lock is released and the process has exited (rejects if it failed). */
  released: Promise<void>;
  /** Commits now (the lock lifts) and resolves as `released` does. */
  release(): Promise<void>;
}

/**
 * Resolves once the other process holds the write lock on `databaseFile`. It keeps it `holdMs`, or
 * (none given) until `release()`.
 */
export async function holdWriteLock(databaseFile: string, holdMs = 0): Promise<WriteLockHolder> {
  const child = spawn(process.execPath, ["-e", SCRIPT, databaseFile, String(holdMs)], {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const released = new Promise<void>((resolve, reject) =>
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`lock holder exited ${code}: ${stderr}`)))),
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout.once("data", () => resolve());
    released.catch(reject);
  });
  return {
    released,
    release() {
      child.stdin.end("release\n");
      return released;
    },
  };
}

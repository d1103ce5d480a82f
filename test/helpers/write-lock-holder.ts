/**
 * A second process holding SQLite's write lock on a database file — what another instance sharing
 * the file does during a long write. It runs `BEGIN IMMEDIATE`, reports, waits, then commits.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

const SCRIPT = `
const Database = require("libsql");
const db = new Database(process.argv[1]);
db.exec("BEGIN IMMEDIATE");
process.stdout.write("held\\n");
setTimeout(() => { db.exec("COMMIT"); db.close(); process.stdout.write("released\\n"); }, Number(process.argv[2]));
`;

export interface WriteLockHolder {
  /** Resolves once the lock is released and the process has exited (rejects if it failed). */
  released: Promise<void>;
}

/** Resolves once the other process holds the write lock on `databaseFile`; it keeps it `holdMs`. */
export async function holdWriteLock(databaseFile: string, holdMs: number): Promise<WriteLockHolder> {
  const child = spawn(process.execPath, ["-e", SCRIPT, databaseFile, String(holdMs)], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
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
  return { released };
}

/**
 * The locks `cms lock` took, so `cms unlock <UID>` needs no --lock-id and `cms info` can show them:
 * `locks.json` beside the login (session.ts), per server URL and resource UID. A lock ID is a
 * capability (with it, the lock can be released), so the file is 0600 like the login, and replaced
 * whole, never through a planted link (private-files.ts). Changes are made one process at a time
 * (file-lock.ts): several `cms lock` at once each keep theirs.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { LockedResourceDTO } from "../client/index.js";
import { withFileLock } from "./file-lock.js";
import { readPrivateFile, writePrivateFile } from "./private-files.js";
import { configDir } from "./session.js";

type HeldLocks = Record<string, Record<string, LockedResourceDTO>>;

const locksFile = () => join(configDir(), "locks.json");

/** The locks remembered; throws when the config folder is unsafe (private-files.ts). */
async function load(): Promise<HeldLocks> {
  const text = await readPrivateFile(locksFile());
  try {
    const parsed = JSON.parse(text ?? "{}") as unknown;
    return parsed && typeof parsed === "object" ? (parsed as HeldLocks) : {};
  } catch {
    return {}; // not JSON: nothing remembered
  }
}

/** Reads, changes and writes the file back, one process at a time; `change` false: nothing to write. */
async function update(change: (locks: HeldLocks) => boolean): Promise<void> {
  await mkdir(configDir(), { recursive: true, mode: 0o700 });
  await withFileLock(locksFile(), async () => {
    const locks = await load();
    if (change(locks)) await save(locks);
  });
}

const save = (locks: HeldLocks) => writePrivateFile(locksFile(), `${JSON.stringify(locks, null, 2)}\n`);

/** The lock this CLI took on `uid` at `server`, if any and not yet expired. */
export async function heldLock(server: string, uid: string): Promise<LockedResourceDTO | undefined> {
  const lock = (await load())[server]?.[uid];
  const expires = Date.parse(lock?.lockExpirationDate ?? "");
  return lock && !(expires <= Date.now()) ? lock : undefined;
}

export async function rememberLock(server: string, lock: LockedResourceDTO): Promise<void> {
  await update((locks) => {
    // Expired entries go whenever the file is written: it never grows past the locks still held.
    const now = Date.now();
    const kept = Object.entries(locks[server] ?? {}).filter(
      ([, held]) => !(Date.parse(held.lockExpirationDate ?? "") <= now),
    );
    locks[server] = { ...Object.fromEntries(kept), [lock.resourceUID]: lock };
    return true;
  });
}

/** Forgets the lock on `uid` (only if it is `lockID`, when given: another lock taken since stays). */
export async function forgetLock(server: string, uid: string, lockID?: string): Promise<void> {
  await update((locks) => {
    const held = locks[server]?.[uid];
    if (!held || (lockID !== undefined && held.lockID !== lockID)) return false;
    delete locks[server]?.[uid];
    if (Object.keys(locks[server] ?? {}).length === 0) delete locks[server];
    return true;
  });
}

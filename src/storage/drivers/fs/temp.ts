/**
 * Per-process temp folders of the fs driver. Each open store writes its uploads under
 * `<root>/.tmp/<id>/`, with an `owner` marker naming the host, pid and the process's start time. At
 * start-up a folder whose owner is dead goes at once, whatever its age: on this host the pid is gone
 * or now belongs to a process started at another time; on another host (a shared volume) its marker,
 * refreshed every few minutes while the owner lives, is older than `maxAgeMs`. Loose entries of
 * older versions (directly in `.tmp/`) go once untouched for `maxAgeMs`.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { lstat, mkdir, readFile, readdir, rm, utimes, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";

const MARKER = "owner";
/** How often a live process refreshes its marker's mtime (seen by processes on other hosts). */
const HEARTBEAT_MS = 5 * 60 * 1000;

interface Owner {
  host: string;
  pid: number;
  /** Kernel start time of the process (Linux `/proc/<pid>/stat` field 22), so a reused pid is told apart. */
  start: string | null;
}

/** The start time of process `pid` as the kernel reports it, or null where there is no /proc. */
function startTimeOf(pid: number | "self"): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    // Fields after the command name (which may contain spaces) start after the last ")".
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

const self: Owner = { host: hostname(), pid: process.pid, start: startTimeOf("self") };

function isAlive(owner: Owner): boolean {
  if (owner.start !== null) return startTimeOf(owner.pid) === owner.start;
  try {
    process.kill(owner.pid, 0); // signal 0: only asks whether the process exists
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function parseOwner(text: string): Owner | null {
  try {
    const o = JSON.parse(text) as Partial<Owner>;
    if (typeof o.host !== "string" || !Number.isSafeInteger(o.pid) || (o.start !== null && typeof o.start !== "string"))
      return null;
    return o as Owner;
  } catch {
    return null;
  }
}

/** This process's own temp folder under `tmpRoot`; its marker is refreshed until `stop`. */
export async function claimTempDir(tmpRoot: string): Promise<{ dir: string; stop(): void }> {
  const dir = path.join(tmpRoot, `${self.pid}-${randomUUID()}`);
  await mkdir(dir, { recursive: true });
  const marker = path.join(dir, MARKER);
  await writeFile(marker, JSON.stringify(self));
  const heartbeat = setInterval(() => {
    const now = new Date();
    utimes(marker, now, now).catch(() => {});
  }, HEARTBEAT_MS);
  heartbeat.unref();
  return { dir, stop: () => clearInterval(heartbeat) };
}

/**
 * Removes folders of dead owners and loose entries untouched for `maxAgeMs`, never `keep` (this
 * store's own folder). Resolves to the number of entries removed.
 */
export async function sweepTempRoot(tmpRoot: string, maxAgeMs: number, keep?: string): Promise<number> {
  let names: string[];
  try {
    names = await readdir(tmpRoot);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw err;
  }
  const cutoff = Date.now() - maxAgeMs;
  let removed = 0;
  for (const name of names) {
    const entry = path.join(tmpRoot, name);
    if (entry === keep) continue;
    const st = await lstat(entry).catch(() => null);
    if (!st) continue;
    const markerPath = path.join(entry, MARKER);
    const owner = st.isDirectory() ? parseOwner(await readFile(markerPath, "utf8").catch(() => "")) : null;
    let dead: boolean;
    if (owner && owner.host === self.host) dead = !isAlive(owner);
    else if (owner) dead = ((await lstat(markerPath).catch(() => null))?.mtimeMs ?? 0) <= cutoff;
    else dead = st.mtimeMs <= cutoff;
    if (!dead) continue;
    await rm(entry, { recursive: true, force: true });
    removed += 1;
  }
  return removed;
}

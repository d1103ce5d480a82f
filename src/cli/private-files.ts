/**
 * The CLI's own files in its config folder (session.json: the login; locks.json: lock IDs), which
 * hold credentials: readable by the user alone, replaced whole, and never written through a link
 * someone planted (issue 41 item 9). Each write goes to a new file of a random name created
 * exclusively (O_CREAT|O_EXCL, and O_NOFOLLOW: a name that exists, a symlink included, fails
 * instead of being opened), mode 0600, synced, then renamed over the file: rename replaces a
 * symlink at the name, it never writes to its target. A folder other users may write to could hold
 * anything they planted, so it is refused, for reads too, as ssh refuses such a ~/.ssh.
 */
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { mkdir, open, readFile, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** Group- and world-writable bits. */
const WRITABLE_BY_OTHERS = 0o022;
// Windows has no O_NOFOLLOW (nor these mode bits); O_EXCL alone still refuses an existing name.
const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/** Throws unless `folder` belongs to this user and no one else may write to it (POSIX only). */
async function checkFolder(folder: string): Promise<void> {
  const uid = process.getuid?.();
  if (uid === undefined || process.platform === "win32") return;
  const found = await stat(folder);
  if (found.uid !== uid) {
    throw new Error(`${folder} belongs to another user (uid ${found.uid}): refusing to keep a login or locks there`);
  }
  if ((found.mode & WRITABLE_BY_OTHERS) !== 0) {
    throw new Error(
      `${folder} is writable by others (mode ${(found.mode & 0o777).toString(8)}): refusing to use it; run chmod 700 ${folder}`,
    );
  }
}

/** The file's text, or undefined when it does not exist; throws when its folder is unsafe (checkFolder). */
export async function readPrivateFile(file: string): Promise<string | undefined> {
  try {
    await checkFolder(dirname(file));
    return await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

/** Replaces `file` with `text` (mode 0600, atomically, never through a link), creating its folder 0700 if missing. */
export async function writePrivateFile(file: string, text: string): Promise<void> {
  const folder = dirname(file);
  await mkdir(folder, { recursive: true, mode: 0o700 });
  await checkFolder(folder);
  const aside = join(folder, `.${basename(file)}.${randomBytes(8).toString("hex")}.tmp`);
  const handle = await open(aside, CREATE_NEW, 0o600);
  try {
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(aside, file);
  } catch (err) {
    await rm(aside, { force: true });
    throw err;
  }
}

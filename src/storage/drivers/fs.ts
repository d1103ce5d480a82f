/**
 * Filesystem blob driver (Node/Bun): one file per key under `root`, written to this process's folder
 * under `<root>/.tmp/` (fs/temp.ts) and renamed into place, so readers see the old blob or the
 * complete new one, never a partial file.
 */
import { randomUUID } from "node:crypto";
import { constants, read as readAt, readSync } from "node:fs";
import {
  access,
  link,
  lstat,
  mkdir,
  open,
  opendir,
  readFile,
  realpath,
  rename,
  rm,
  rmdir,
  stat,
  unlink,
  type FileHandle,
} from "node:fs/promises";
import path from "node:path";
import {
  StorageError,
  type BlobFile,
  type BlobInfo,
  type BlobKey,
  type BlobObject,
  type BlobStore,
  type ByteRange,
  type LocalBlobFile,
  type PutOptions,
} from "../blob-store.js";
import { isSha256Hex, parseBlobKey, parseKeyPrefix, tryParseBlobKey } from "../keys.js";
import { HEADER_LENGTH, HEADER_PREFIX, LAZY_HEADER_PREFIX } from "./fs/blob-format.js";
import {
  DRIVER,
  describe,
  errorCode,
  fsyncDir,
  io,
  ioError,
  isMissing,
  noop,
  readFully,
  writeFully,
} from "./fs/file-io.js";
import { createOpenFiles } from "./fs/open-files.js";
import { fileStream, hashOf, type TempFile, writeTempFile } from "./fs/streams.js";
import { claimTempDir, sweepTempRoot } from "./fs/temp.js";

/** Per-process temp folders, swept once their owner is dead: the image spool claims its own the same way. */
export { claimTempDir, sweepTempRoot };
import { checkRange } from "./utils/driver-kit.js";
import { decodeOwner, encodeOwner, OWNER_MARKER } from "./utils/owner-marker.js";
import { commitContentAddressed, targetOrCancel } from "./utils/put-checks.js";

export { DRIVER } from "./fs/file-io.js";

const TMP_DIR = ".tmp";
// Files kept open for openFile (a hot video and its neighbours), and how long an unused one stays open.
const OPEN_FILES_MAX = 64;
const OPEN_FILES_IDLE_MS = 3_000;
const DEFAULT_TEMP_MAX_AGE_MS = 60 * 60 * 1000;
/** Lazily written blob files remembered as whole (more: forgotten, and hashed again when next opened). */
const LAZY_CHECKED_MAX = 16_384;
/**
 * Resolved paths kept by key (cleared when full): a key's validation and path.resolve were ≈ 14 000
 * of the ≈ 220 000 instructions a 64 KiB range costs on Node (callgrind; bench/NOTES.md, tenth pass),
 * paid again by every read of the same blob.
 */
const PATHS_KEPT = 2048;
/** mkdir + rename tries in a put whose directory concurrent deletes keep emptying and removing. */
const COMMIT_ATTEMPTS = 8;

export interface FsBlobStoreOptions {
  /** Directory holding the blobs; created (with parents) if missing. */
  root: string;
  /**
   * The start-up sweep removes the temp folders of dead processes at once (fs/temp.ts); this age
   * (default 1 hour) applies only where liveness cannot be checked: folders of processes on other
   * hosts sharing the volume (their marker is refreshed while they live), and loose temp entries.
   */
  tempMaxAgeMs?: number;
  /**
   * openFile reads up to this many bytes synchronously (one pread on the calling thread; cheaper
   * than a thread-pool round trip when the page cache holds them, but a stalled disk stalls the
   * caller). Default 0: every read goes to the thread pool.
   */
  syncReadBytes?: number;
}

export interface FsBlobStore extends BlobStore {
  /** The resolved (real) root directory. */
  readonly root: string;
  /**
   * Removes leftovers of crashed uploads from `<root>/.tmp/`: folders of dead processes, and entries
   * whose liveness cannot be checked untouched for longer than `olderThanMs` (default: the store's
   * `tempMaxAgeMs`). Never this store's own folder. Resolves to the count.
   */
  sweepTemp(options?: { olderThanMs?: number }): Promise<number>;
  /**
   * Gives up this store's own temp folder (heartbeat stopped, folder removed) on a graceful stop,
   * once no upload is in flight. The blobs are untouched; the store must not be used afterwards.
   */
  close(): Promise<void>;
  openFile(key: BlobKey): Promise<BlobFile | null>;
  /** The files openFile keeps open, and those handed out and not yet released. */
  openFileStats(): { pooled: number; readers: number };
  localFile(key: BlobKey): Promise<LocalBlobFile | null>;
}

class FsStore implements FsBlobStore {
  readonly driver = DRIVER;
  readonly root: string;
  /** This store's own temp folder inside `<root>/.tmp/`. */
  readonly #tmpDir: string;
  readonly #tempMaxAgeMs: number;
  readonly #syncReadBytes: number;
  readonly #files = createOpenFiles<FileHandle, BlobInfo>({ max: OPEN_FILES_MAX, idleMs: OPEN_FILES_IDLE_MS });

  readonly #stopHeartbeat: () => void;
  /** Each valid key's path, as `#resolve` gave it (a key maps to one path for the store's life). */
  readonly #paths = new Map<string, string>();
  /** Lazily written blob files known whole (by path, the inode checked): written or hashed by this process. */
  readonly #lazyChecked = new Map<string, number>();

  constructor(root: string, tmp: { dir: string; stop(): void }, tempMaxAgeMs: number, syncReadBytes: number) {
    this.root = root;
    this.#tmpDir = tmp.dir;
    this.#stopHeartbeat = tmp.stop;
    this.#tempMaxAgeMs = tempMaxAgeMs;
    this.#syncReadBytes = syncReadBytes;
  }

  async put(key: BlobKey, body: ReadableStream<Uint8Array>, options: PutOptions = {}): Promise<BlobInfo> {
    const target = targetOrCancel(body, () => this.#pathOf(key));
    const temp = await writeTempFile(this.#tmpDir, body, options);
    try {
      await this.#commit(temp, target);
    } catch (err) {
      await this.#discard(temp.path);
      throw err;
    }
    return temp.info;
  }

  async putContentAddressed(
    body: ReadableStream<Uint8Array>,
    keyFor: (info: BlobInfo) => BlobKey,
    options: PutOptions = {},
  ): Promise<BlobInfo & { key: BlobKey; created: boolean }> {
    const temp = await writeTempFile(this.#tmpDir, body, options);
    return commitContentAddressed(temp.info, keyFor, options.reserve, {
      exists: async (key) => {
        const existing = await stat(this.#pathOf(key)).catch((err: unknown) => {
          if (isMissing(err)) return null;
          throw ioError("stat blob", err);
        });
        return existing?.isFile() ?? false;
      },
      commit: (key) => this.#commit(temp, this.#pathOf(key)),
      discard: () => this.#discard(temp.path),
    });
  }

  async get(key: BlobKey, range?: ByteRange): Promise<BlobObject | null> {
    const file = this.#pathOf(key);
    const opened = await this.#open(file);
    if (!opened) return null;
    const { handle, info } = opened;
    const start = range?.start ?? 0;
    const length = range ? range.end - range.start + 1 : info.size;
    try {
      if (range) checkRange(range, info.size);
    } catch (err) {
      await handle.close().catch(noop);
      throw err;
    }
    // The open handle pins this inode: a concurrent overwrite or delete cannot change what we read.
    return { ...info, body: fileStream(handle, HEADER_LENGTH + start, length) };
  }

  /**
   * Where the blob's content lies on disk, for a runtime that sends files itself (Bun.serve's
   * sendfile): one stat, no open; the header is not read (its format is checked by `get`, on the
   * app's path). Content-addressed blob files never change, so the path is as good as a handle.
   */
  async localFile(key: BlobKey): Promise<LocalBlobFile | null> {
    const file = this.#pathOf(key);
    const st = await stat(file).catch((err: unknown) => {
      if (isMissing(err)) return null;
      throw ioError("stat blob", err);
    });
    if (!st?.isFile() || st.size < HEADER_LENGTH) return null;
    return { path: file, offset: HEADER_LENGTH, size: st.size - HEADER_LENGTH };
  }

  /** Served from a small pool of open files (fs/open-files.ts); content-addressed blobs never change. */
  async openFile(key: BlobKey): Promise<BlobFile | null> {
    const file = this.#pathOf(key);
    const pooled = await this.#files.acquire(file, () => this.#open(file));
    if (!pooled) return null;
    const { handle, info, release } = pooled;
    return {
      ...info,
      // The callback API on the handle's descriptor: no promise per read. The pool never closes a
      // file while it is acquired, and the caller releases it only after its last read is done.
      read: (into, offset, length, position, done) => {
        const failed = (err: unknown) => {
          this.#files.forget(file); // whatever went wrong, the next reader opens afresh
          done(ioError("read blob", err), 0);
        };
        if (length > this.#syncReadBytes) {
          return readAt(handle.fd, into, offset, length, HEADER_LENGTH + position, (err, bytesRead) =>
            err ? failed(err) : done(null, bytesRead),
          );
        }
        let bytesRead: number;
        try {
          bytesRead = readSync(handle.fd, into, offset, length, HEADER_LENGTH + position);
        } catch (err) {
          return failed(err);
        }
        done(null, bytesRead);
      },
      release,
    };
  }

  openFileStats() {
    return this.#files.stats();
  }

  async head(key: BlobKey): Promise<BlobInfo | null> {
    const opened = await this.#open(this.#pathOf(key));
    if (!opened) return null;
    await opened.handle.close().catch(noop);
    return opened.info;
  }

  async delete(key: BlobKey): Promise<void> {
    const file = this.#pathOf(key);
    this.#files.forget(file);
    try {
      await unlink(file);
    } catch (err) {
      if (isMissing(err)) return;
      // A directory at this path only holds other keys: there is no blob to delete.
      const st = await lstat(file).catch(() => null);
      if (st?.isDirectory()) return;
      throw ioError("delete blob", err);
    }
    await this.#removeEmptied(path.dirname(file));
  }

  async *list(prefix: string): AsyncGenerator<BlobKey> {
    const validPrefix = parseKeyPrefix(prefix);
    // Only walk the deepest directory the prefix fully names; filter the rest by string prefix.
    const slash = validPrefix.lastIndexOf("/");
    yield* this.#walk(slash === -1 ? "" : validPrefix.slice(0, slash), validPrefix);
  }

  async check(): Promise<void> {
    const probe = path.join(this.root, `.probe-${randomUUID()}`);
    try {
      await mkdir(this.#tmpDir, { recursive: true }); // uploads need it; restore it if removed
      const handle = await open(probe, "wx");
      try {
        await handle.writeFile("probe");
        await handle.sync();
      } finally {
        await handle.close();
      }
      await unlink(probe);
    } catch (err) {
      await rm(probe, { force: true }).catch(noop);
      throw new StorageError(DRIVER, "IO", `blob store root ${this.root} is not writable: ${describe(err)}`, {
        cause: err,
      });
    }
  }

  async probe(): Promise<void> {
    try {
      // One stat-like call: also fails on a read-only remount (EROFS), without writing.
      await access(this.root, constants.R_OK | constants.W_OK | constants.X_OK);
    } catch (err) {
      throw new StorageError(DRIVER, "IO", `blob store root ${this.root} is not usable: ${describe(err)}`, {
        cause: err,
      });
    }
  }

  async owner(): Promise<string | null> {
    const text = await readFile(path.join(this.root, OWNER_MARKER), "utf8").catch((err: unknown) => {
      if (isMissing(err)) return null;
      throw ioError("read owner marker", err);
    });
    return text === null ? null : decodeOwner(DRIVER, text);
  }

  /**
   * The marker is written whole to this process's temp folder, then hard-linked into place: link()
   * fails with EEXIST if the name exists, in one step, so of racing claims (any processes, any
   * hosts sharing the volume) exactly one succeeds, and nobody ever reads a partial marker.
   */
  async claimOwner(id: string): Promise<string> {
    const bytes = encodeOwner(id);
    const marker = path.join(this.root, OWNER_MARKER);
    const temp = path.join(this.#tmpDir, `${randomUUID()}.owner`);
    try {
      const handle = await io("write owner marker", () => open(temp, "wx"));
      try {
        await io("write owner marker", () => writeFully(handle, bytes, 0));
        await io("fsync owner marker", () => handle.sync());
      } finally {
        await handle.close().catch(noop);
      }
      try {
        await link(temp, marker);
        await fsyncDir(this.root);
        return id;
      } catch (err) {
        if (errorCode(err) !== "EEXIST") throw ioError("record owner marker", err);
      }
    } finally {
      await rm(temp, { force: true }).catch(noop);
    }
    const owner = await this.owner();
    if (owner === null)
      throw new StorageError(DRIVER, "IO", `the owner marker ${OWNER_MARKER} vanished while it was claimed`);
    return owner;
  }

  sweepTemp(options: { olderThanMs?: number } = {}): Promise<number> {
    return io("sweep temp files", () =>
      sweepTempRoot(path.join(this.root, TMP_DIR), options.olderThanMs ?? this.#tempMaxAgeMs, this.#tmpDir),
    );
  }

  async close(): Promise<void> {
    this.#stopHeartbeat();
    await rm(this.#tmpDir, { recursive: true, force: true }).catch(noop);
  }

  /** Resolves a key to its file: validated, and checked to stay under root, the first time; kept after. */
  #pathOf(key: BlobKey): string {
    let resolved = this.#paths.get(key);
    if (resolved === undefined) {
      resolved = this.#resolve(parseBlobKey(key)); // throws for an invalid key: never kept
      if (this.#paths.size >= PATHS_KEPT) this.#paths.clear();
      this.#paths.set(key, resolved);
    }
    return resolved;
  }

  #resolve(relative: string): string {
    const resolved = path.resolve(this.root, ...relative.split("/"));
    if (!resolved.startsWith(this.root + path.sep)) {
      throw new StorageError(DRIVER, "INVALID_KEY", "key resolves outside the store root");
    }
    return resolved;
  }

  /**
   * Removes `dir` and then each parent while it is empty, never the root: without this every
   * emptied directory (each tus upload's `tus/<id>/`) stayed forever. rmdir refuses a directory
   * that is not empty, so a concurrent put's file is never lost; a put whose directory goes between
   * its mkdir and its rename makes it again (#commit).
   */
  async #removeEmptied(dir: string): Promise<void> {
    for (let d = dir; d !== this.root && d.startsWith(this.root + path.sep); d = path.dirname(d)) {
      try {
        await rmdir(d);
      } catch {
        return; // not empty (the usual case), already gone, or not ours to remove: nothing more to do
      }
    }
  }

  #checkedLazy(file: string, ino: number): void {
    if (this.#lazyChecked.size >= LAZY_CHECKED_MAX) this.#lazyChecked.clear();
    this.#lazyChecked.set(file, ino);
  }

  /**
   * Renames the finished temp file over `target` and makes the new directory entries durable; a
   * lazily written one (`durable: false`) is only renamed, and remembered as whole by this process.
   */
  async #commit({ path: tempPath, ino: lazyIno }: TempFile, target: string): Promise<void> {
    const dir = path.dirname(target);
    let firstCreated: string | undefined;
    // A delete emptying `dir` may remove it (or a parent) between our mkdir and rename: then both
    // fail with ENOENT and are simply done again. Bounded, in case ENOENT has another cause.
    for (let attempt = 1; ; attempt++) {
      let step = "create directory";
      try {
        const created = await mkdir(dir, { recursive: true });
        if (created !== undefined && (firstCreated === undefined || created.length < firstCreated.length))
          firstCreated = created;
        step = "rename into place";
        await rename(tempPath, target);
        break;
      } catch (err) {
        if (errorCode(err) !== "ENOENT" || attempt === COMMIT_ATTEMPTS) throw ioError(step, err);
      }
    }
    this.#files.forget(target); // an open file of the blob it replaced must not be served again
    if (lazyIno !== undefined) return this.#checkedLazy(target, lazyIno);
    const dirs = [dir];
    if (firstCreated !== undefined) {
      // New fan-out directories are entries in their parents: sync up to the first one that existed.
      const lastExisting = path.dirname(firstCreated);
      for (let d = dir; d !== lastExisting && d.startsWith(this.root + path.sep); ) {
        d = path.dirname(d);
        dirs.push(d);
      }
    }
    // All at once: each must be durable before the put resolves, none before another; concurrent
    // fsyncs share the file system's journal commits instead of waiting for one each.
    await Promise.all(dirs.map(fsyncDir));
  }

  async #discard(tempPath: string): Promise<void> {
    await rm(tempPath, { force: true }).catch(noop);
  }

  /** Opens a blob file and reads its header, or null when there is no blob at that path. */
  async #open(file: string): Promise<{ handle: FileHandle; info: BlobInfo } | null> {
    let handle: FileHandle;
    try {
      handle = await open(file, "r");
    } catch (err) {
      if (isMissing(err) || errorCode(err) === "EISDIR") return null;
      throw ioError("open blob", err);
    }
    try {
      const st = await handle.stat();
      if (!st.isFile()) {
        await handle.close().catch(noop);
        return null; // a fan-out directory, not a blob
      }
      const header = new TextDecoder().decode(await readFully(handle, HEADER_LENGTH, 0));
      const sha256 = header.slice(HEADER_PREFIX.length, -1);
      const lazy = header.startsWith(LAZY_HEADER_PREFIX);
      if (!(lazy || header.startsWith(HEADER_PREFIX)) || !header.endsWith("\n") || !isSha256Hex(sha256)) {
        throw new StorageError(DRIVER, "IO", "blob file has no valid header (not written by this driver?)");
      }
      const info = { size: st.size - HEADER_LENGTH, sha256 };
      if (lazy && this.#lazyChecked.get(file) !== st.ino) {
        // What a crash left of a lazily written blob (cut short, zeroed) is no blob at all.
        if ((await hashOf(handle, HEADER_LENGTH, info.size)) !== sha256) {
          await handle.close().catch(noop);
          return null;
        }
        this.#checkedLazy(file, st.ino);
      }
      return { handle, info };
    } catch (err) {
      await handle.close().catch(noop);
      throw ioError("read blob header", err);
    }
  }

  async *#walk(relativeDir: string, prefix: string): AsyncGenerator<BlobKey> {
    let dir: Awaited<ReturnType<typeof opendir>>;
    try {
      dir = await opendir(relativeDir ? this.#resolve(relativeDir) : this.root);
    } catch (err) {
      if (isMissing(err)) return;
      throw ioError("list blobs", err);
    }
    for await (const entry of dir) {
      if (entry.name.startsWith(".")) continue; // .tmp, probes: never keys
      const key = relativeDir ? `${relativeDir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        const asPrefix = `${key}/`;
        if (asPrefix.startsWith(prefix) || prefix.startsWith(asPrefix)) yield* this.#walk(key, prefix);
      } else if (entry.isFile() && key.startsWith(prefix)) {
        // Skip stray files whose names are not valid keys (never written by this driver).
        const valid = tryParseBlobKey(key);
        if (valid) yield valid;
      }
    }
  }
}

/**
 * Opens (creating if needed) a filesystem blob store and sweeps stale temp files. Throws
 * StorageError IO naming the root when it cannot be created. One fs limit: a key cannot be both a
 * blob and the directory of another (`a` and `a/b`); content keys never are.
 */
export async function createFsBlobStore(options: FsBlobStoreOptions): Promise<FsBlobStore> {
  const requested = path.resolve(options.root);
  let root: string;
  try {
    await mkdir(path.join(requested, TMP_DIR), { recursive: true });
    root = await realpath(requested); // so the under-root assertion compares real paths
  } catch (err) {
    throw new StorageError(DRIVER, "IO", `cannot create blob store root ${requested}: ${describe(err)}`, {
      cause: err,
    });
  }
  const tmp = await io("create temp folder", () => claimTempDir(path.join(root, TMP_DIR)));
  const store = new FsStore(root, tmp, options.tempMaxAgeMs ?? DEFAULT_TEMP_MAX_AGE_MS, options.syncReadBytes ?? 0);
  await store.sweepTemp();
  return store;
}

/**
 * The fs driver's file primitives: errno-aware failures (as StorageError IO), whole reads and
 * writes at a position, and directory fsync.
 */
import { open, type FileHandle } from "node:fs/promises";
import { ioWrappers } from "../utils/io-errors.js";

export const DRIVER = "fs";

export type NodeError = Error & { code?: string };
export const errorCode = (err: unknown) => (err instanceof Error ? (err as NodeError).code : undefined);
export const describe = (err: unknown) => errorCode(err) ?? (err instanceof Error ? err.message : String(err));
export const noop = () => {};

/** ENOENT, or ENOTDIR when a path component is a file (key `a/b` while `a` is a blob). */
export const isMissing = (err: unknown) => errorCode(err) === "ENOENT" || errorCode(err) === "ENOTDIR";

/** Filesystem failures as StorageError IO, naming the errno code when there is one. */
export const { ioError, io } = ioWrappers(DRIVER, describe);

export async function writeFully(handle: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  let offset = 0;
  while (offset < bytes.byteLength) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.byteLength - offset, position + offset);
    offset += bytesWritten;
  }
}

export async function readFully(handle: FileHandle, length: number, position: number): Promise<Uint8Array> {
  const bytes = new Uint8Array(length);
  let offset = 0;
  while (offset < length) {
    const { bytesRead } = await handle.read(bytes, offset, length - offset, position + offset);
    if (bytesRead === 0) break;
    offset += bytesRead;
  }
  return bytes.subarray(0, offset);
}

/** fsyncs a directory so a rename or new entry in it survives a crash. */
export async function fsyncDir(dir: string): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(dir, "r");
  } catch (err) {
    // Some platforms (Windows) cannot open directories; nothing more can be done there. A directory
    // already gone was emptied and removed by a delete (#removeEmptied): nothing in it to make durable.
    if (errorCode(err) === "EISDIR" || errorCode(err) === "EPERM" || errorCode(err) === "ENOENT") return;
    throw ioError("open directory", err);
  }
  try {
    await handle.sync();
  } catch (err) {
    if (errorCode(err) !== "EINVAL") throw ioError("fsync directory", err);
  } finally {
    await handle.close().catch(noop);
  }
}

/**
 * How the fs and R2 drivers turn a failed operation into StorageError IO (one wording for both).
 * Web APIs only: R2 runs in workerd.
 */
import { StorageError } from "../../blob-store.js";

export interface IoWrappers {
  /** Wraps a failure of `operation`; StorageErrors (already meaningful) pass through unchanged. */
  ioError(operation: string, err: unknown): StorageError;
  /** Runs `fn`, rethrowing its failure through `ioError`. */
  io<T>(operation: string, fn: () => Promise<T>): Promise<T>;
}

/** errno codes of a full volume (no space left, disk quota exceeded): not bugs, so answered 507. */
const NO_SPACE_ERRNOS = new Set<unknown>(["ENOSPC", "EDQUOT"]);

/** The wrappers for one driver; `describe` renders the underlying error (e.g. an errno code). */
export function ioWrappers(driver: string, describe: (err: unknown) => string): IoWrappers {
  const ioError = (operation: string, err: unknown): StorageError => {
    if (err instanceof StorageError) return err;
    const code = NO_SPACE_ERRNOS.has((err as { code?: unknown } | null)?.code) ? "NO_SPACE" : "IO";
    return new StorageError(driver, code, `${operation} failed: ${describe(err)}`, { cause: err });
  };
  const io = async <T>(operation: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw ioError(operation, err);
    }
  };
  return { ioError, io };
}

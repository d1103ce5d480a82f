/**
 * A row whose blob the store does not hold: the answer is 500 `BLOB_MISSING`, and the operator's
 * log names the key once (every later read of it would repeat the same line). Rows are written only
 * after their blob is durable (content.ts), so this means the blob was deleted behind the service's
 * back: another deployment's purge on a shared store (issue 41), a restore that skipped it.
 */
import type { Logger } from "../lib/logger.js";
import { ProblemError } from "../problems.js";

/** Keys remembered as logged; past this many the memory starts over (a key may then be logged again). */
const REMEMBERED_KEYS = 10_000;

/** Returns the problem for a row whose blob `blobKey` is missing, logging each key once. */
export function blobMissingProblems(logger: Logger | undefined): (blobKey: string) => ProblemError {
  const logged = new Set<string>();
  return (blobKey) => {
    if (!logged.has(blobKey)) {
      if (logged.size >= REMEMBERED_KEYS) logged.clear();
      logged.add(blobKey);
      logger?.error("blob missing under its row", { blobKey });
    }
    // The key stays in the log: it names the tenant's storage area, which is not the client's business.
    return new ProblemError(
      "BLOB_MISSING",
      "the stored content of this resource is missing from the blob store; the service's log names it",
    );
  };
}

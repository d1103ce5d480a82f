/**
 * CMS_DATABASE_READ_URL: a MetadataStore whose serving reads go to a read replica, everything else to
 * the primary. A replica lags its primary, so the rule is by what a read decides:
 *
 * - On the replica: getData's lookup by URI (findByUri) and one numbered revision (revision). What
 *   they return only ever becomes an answer, never the input of a write. A miss (no row) or a failed
 *   replica is asked of the primary before anything answers 404 or 503: a resource that exists on the
 *   primary is never a 404 here, whatever the lag.
 * - On the primary: every write, and every read a write request makes — by UID (update and delete
 *   read the revision their guarded statement expects), locks, tus uploads, quotas, the blob ledger
 *   and the collector's counts, lists, revision lists. A request that writes therefore reads only the
 *   primary, and no lock, quota, tus offset or revision guard is ever decided on the replica's state.
 *
 * What the replica can still show: for at most its replication lag, the previous state of a row that
 * already existed (another request's update, or a delete, not yet replicated).
 */
import type { MetadataStore } from "./metadata-store.js";

/** `replicaFailed`: told each replica error (the read then went to the primary), e.g. to log it. */
export function withReadReplica(
  primary: MetadataStore,
  replica: MetadataStore,
  replicaFailed: (err: unknown) => void = () => {},
): MetadataStore {
  /** The replica's answer unless it has none (null) or fails: then the primary's. */
  const replicaFirst =
    <A extends unknown[], R>(
      onReplica: (...args: A) => Promise<R | null>,
      onPrimary: (...args: A) => Promise<R | null>,
    ) =>
    async (...args: A): Promise<R | null> => {
      const found = await onReplica(...args).catch((err: unknown) => {
        replicaFailed(err);
        return null;
      });
      return found ?? onPrimary(...args);
    };

  return {
    ...primary,
    findByUri: replicaFirst(replica.findByUri, primary.findByUri),
    revision: replicaFirst(replica.revision, primary.revision),
  };
}

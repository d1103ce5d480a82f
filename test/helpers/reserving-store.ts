/**
 * A ResourceStore for tests that write rows directly: it reserves each row's blob key in the ledger
 * first, as content.put does for the services (the database refuses rows whose blob is unreserved).
 */
import type { ResourceStore } from "../../src/metadata/resource-store.js";

export function reservingStore(store: ResourceStore): ResourceStore {
  const reserve = async (keys: (string | undefined)[]) => {
    for (const key of keys) if (key !== undefined) await store.ledger.reserve(key, Date.now(), 60_000);
  };
  return {
    ...store,
    async insertAll(rows) {
      await reserve(rows.map((r) => r.blobKey));
      return store.insertAll(rows);
    },
    async insert(row) {
      await reserve([row.blobKey]);
      return store.insert(row);
    },
    async update(change, changes) {
      await reserve([changes.blobKey]);
      return store.update(change, changes);
    },
  };
}

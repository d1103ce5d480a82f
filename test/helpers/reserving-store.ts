/**
 * A MetadataStore for tests that write rows directly: it reserves each row's blob key in the ledger
 * first, as content.put does for the services (the database refuses rows whose blob is unreserved).
 */
import type { MetadataStore } from "../../src/metadata/metadata-store.js";

export function reservingStore(store: MetadataStore): MetadataStore {
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

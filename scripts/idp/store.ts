// Per-IdP in-memory storage adapter for oidc-provider.
// Own store (not the library's module-wide one) so several IdPs in one test process stay apart, and
// so sessions, grants and refresh tokens survive the provider rebuild that rotateKey() does.
import type { Adapter, AdapterPayload } from "oidc-provider";

interface Entry {
  payload: AdapterPayload;
  expiresAt: number;
}

export interface MemoryStore {
  adapterFor(model: string): Adapter;
  clear(): void;
}

export function createMemoryStore(): MemoryStore {
  const entries = new Map<string, Entry>();
  const byGrant = new Map<string, Set<string>>();
  const lookups = new Map<string, string>(); // "uid:<uid>" / "userCode:<code>" -> entry key
  let writes = 0;

  // Expired entries are otherwise only dropped when read; a long-running `npm run idp` should not grow forever.
  const sweep = (): void => {
    const now = Date.now();
    for (const [key, entry] of entries) if (entry.expiresAt <= now) entries.delete(key);
    for (const [grantId, members] of byGrant) {
      for (const key of members) if (!entries.has(key)) members.delete(key);
      if (members.size === 0) byGrant.delete(grantId);
    }
    for (const [lookup, key] of lookups) if (!entries.has(key)) lookups.delete(lookup);
  };

  const read = (key: string): AdapterPayload | undefined => {
    const entry = entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      entries.delete(key);
      return undefined;
    }
    return entry.payload;
  };

  const adapterFor = (model: string): Adapter => {
    const keyOf = (id: string) => `${model}:${id}`;
    return {
      async upsert(id, payload, expiresIn) {
        if (++writes % 1000 === 0) sweep();
        const key = keyOf(id);
        const expiresAt = typeof expiresIn === "number" ? Date.now() + expiresIn * 1000 : Infinity;
        entries.set(key, { payload, expiresAt });
        if (payload.grantId) {
          const members = byGrant.get(payload.grantId) ?? new Set<string>();
          members.add(key);
          byGrant.set(payload.grantId, members);
        }
        if (payload.uid) lookups.set(`uid:${payload.uid}`, key);
        if (payload.userCode) lookups.set(`userCode:${payload.userCode}`, key);
      },
      async find(id) {
        return read(keyOf(id));
      },
      async findByUid(uid) {
        const key = lookups.get(`uid:${uid}`);
        return key ? read(key) : undefined;
      },
      async findByUserCode(userCode) {
        const key = lookups.get(`userCode:${userCode}`);
        return key ? read(key) : undefined;
      },
      async consume(id) {
        const payload = read(keyOf(id));
        if (payload) payload.consumed = Math.floor(Date.now() / 1000);
      },
      async destroy(id) {
        entries.delete(keyOf(id));
      },
      async revokeByGrantId(grantId) {
        for (const key of byGrant.get(grantId) ?? []) entries.delete(key);
        byGrant.delete(grantId);
      },
    };
  };

  return {
    adapterFor,
    clear() {
      entries.clear();
      byGrant.clear();
      lookups.clear();
    },
  };
}

/**
 * Resource locks as this browser holds them: lockResourceDTO answers a lockID that only its holder
 * knows, kept in localStorage per resource so an unlock, a new version or a delete can prove it.
 */
import type { Api } from "./api.js";

interface Held {
  lockID: string;
  author: string;
}

const KEY = "cms.library.lock.";

export const heldLock = (uid: string): Held | null =>
  JSON.parse(localStorage.getItem(KEY + uid) ?? "null") as Held | null;

export async function lock(api: Api, uid: string, author: string): Promise<Held> {
  const locked = await api.send(
    api.client.api.POST("/cms/v1.0/lockResourceDTO", { body: { resourceUID: uid, author } }),
  );
  const held = { lockID: locked.lockID, author: locked.author };
  localStorage.setItem(KEY + uid, JSON.stringify(held));
  return held;
}

export async function unlock(api: Api, uid: string): Promise<void> {
  const held = heldLock(uid);
  if (held) await api.call(api.client.unlock({ resourceUID: uid, ...held }));
  localStorage.removeItem(KEY + uid);
}

export const forget = (uid: string) => localStorage.removeItem(KEY + uid);

/**
 * Runs `change` under this browser's lock: the one it holds, or one taken for the change and
 * released after it (a change that ends the resource, such as a delete, needs no release).
 */
export async function underLock<T>(
  api: Api,
  uid: string,
  author: string,
  change: (held: Held) => Promise<T>,
  { release = true } = {},
): Promise<T> {
  const existing = heldLock(uid);
  const held = existing ?? (await lock(api, uid, author));
  try {
    return await change(held);
  } finally {
    if (!existing && release) await unlock(api, uid).catch(() => {});
    if (!release) forget(uid);
  }
}

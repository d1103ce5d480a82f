/** Lock endpoints: thin handlers over the lock service, behind the auth guards. */
import type { Guards } from "../../auth/guards.js";
import { holderOf, type Principal } from "../../auth/principal.js";
import type { LockRow, ResourceRow } from "../../metadata/schema.js";
import type { LockService } from "../../services/locks.js";
import { toUri } from "../../services/resource-ids.js";
import { createRouter, guarded, type RouteGroup } from "../router.js";
import * as contract from "./contract.js";

const iso = (ms: number) => new Date(ms).toISOString();

const toLockedResource = ({ row, lock }: { row: ResourceRow; lock: LockRow }) => ({
  resourceUID: row.uid,
  author: lock.owner,
  resourceURI: toUri(row),
  resourcesList: null,
  lockID: lock.lockId,
  lockExpirationDate: iso(lock.expiresAt),
  resourceName: row.name,
});

/** The lockID is the key to the lock: shown only to its authenticated holder. */
const toLock = (lock: LockRow, viewer?: Principal) => ({
  lockID: !viewer || (lock.holder !== null && lock.holder === holderOf(viewer)) ? lock.lockId : null,
  lockOwner: lock.owner,
  lockExpiration: iso(lock.expiresAt),
  uid: lock.name,
});

export function createLockRouter({ locks, guards }: { locks: LockService; guards: Guards }): RouteGroup {
  const router = createRouter();
  const creator = guards.role("creator");

  return router
    .openapi(guarded(contract.lockResourceDto, creator), async (c) => {
      const { resourceUID, author } = c.req.valid("json");
      return c.json(toLockedResource(await locks.lockResource(resourceUID, author, c.get("principal"))), 200);
    })
    .openapi(guarded(contract.unlockResourceDto, creator), async (c) => {
      const { resourceUID, author, lockID } = c.req.valid("json");
      await locks.unlockResource({ name: resourceUID, owner: author, lockId: lockID }, c.get("principal"));
      return c.body(null, 204);
    })
    .openapi(guarded(contract.renewResourceDtoLock, creator), async (c) => {
      const { resourceUID, author, lockID } = c.req.valid("json");
      return c.json(
        toLockedResource(
          await locks.renewResource({ name: resourceUID, owner: author, lockId: lockID }, c.get("principal")),
        ),
        200,
      );
    })
    .openapi(guarded(contract.lockName, creator), async (c) => {
      const { uid, lockOwner, lockExpiration } = c.req.valid("json");
      return c.json(toLock(await locks.lockName(uid, lockOwner, lockExpiration ?? undefined, c.get("principal"))), 200);
    })
    .openapi(guarded(contract.unlockName, creator), async (c) => {
      const { uid, lockID, lockOwner } = c.req.valid("json");
      await locks.unlockName({ name: uid, lockId: lockID, owner: lockOwner }, c.get("principal"));
      return c.body(null, 204);
    })
    .openapi(guarded(contract.renewName, creator), async (c) => {
      const { uid, lockID, lockOwner, lockExpiration } = c.req.valid("json");
      const claim = { name: uid, lockId: lockID, owner: lockOwner };
      return c.json(toLock(await locks.renewName(claim, lockExpiration ?? undefined, c.get("principal"))), 200);
    })
    .openapi(guarded(contract.resourceAccess, guards.role("consumer")), async (c) => {
      const principal = c.get("principal");
      const { row, lock, modify, purge } = await locks.access(c.req.valid("param").resourceUID, principal);
      return c.json({ resourceUID: row.uid, lock: lock && toLock(lock, principal), may: { modify, purge } }, 200);
    })
    .openapi(guarded(contract.queryName, guards.role("consumer")), async (c) => {
      const principal = c.get("principal");
      return c.json(toLock(await locks.queryName(c.req.valid("json").uid, principal), principal), 200);
    });
}

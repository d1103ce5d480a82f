/**
 * Lock rules for the two lock APIs, which share one namespace: resource
 * locks (lockResourceDTO & co., keyed by resource UID) and generic named locks (lockResource & co.).
 * Locks live in the metadata store; an expired lock never blocks; only the holder, or an
 * authenticated admin, may release one. The lock's holder is the token subject, never a request field.
 */
import { assertTenant, can, hasRole, holderOf, type Principal } from "../auth/principal.js";
import { ProblemError } from "../problems.js";
import type { LockProof, MetadataStore } from "../metadata/metadata-store.js";
import type { LockRow, ResourceRow } from "../metadata/schema.js";
import { parseUid } from "./resource-ids.js";
import { assertMayModify, type ResourceService } from "./resources.js";

export interface LockServiceDeps {
  store: MetadataStore;
  resources: ResourceService;
  clock: () => Date;
  /** Lifetime of a new lock and what renew extends to, in ms. */
  ttlMs: number;
  /** Longest lifetime a client may ask for, in ms. */
  maxTtlMs: number;
}

/** The lock DTO fields as the client sent them. */
export interface LockClaim {
  name: string;
  lockId: string;
  owner: string;
  /** The request field that carried `owner`, named when it does not match the lock ("author" unless told). */
  ownerField?: string;
}

export type LockService = ReturnType<typeof createLockService>;

const iso = (ms: number) => new Date(ms).toISOString();

export const proofOf = (claim: LockClaim, principal: Principal): LockProof => ({
  lockId: claim.lockId,
  owner: claim.owner,
  holder: holderOf(principal),
});

/**
 * Why a change guarded by `proof` cannot proceed: 423 when someone else holds a live lock, 409 when
 * there is no live lock at all. The message never repeats another holder's lockID.
 */
export async function lockProblem(
  store: MetadataStore,
  name: string,
  proof: LockProof,
  now: number,
): Promise<ProblemError> {
  const held = await store.locks.find(name, now);
  if (!held)
    return new ProblemError(
      "LOCK_NOT_HELD",
      `${name} is not locked, or its lock expired or was released; lock it first`,
    );
  if (held.lockId === proof.lockId && held.owner === proof.owner && held.holder === proof.holder) {
    // The lock matches now: the guarded change lost a race (e.g. a concurrent update). Retry-safe.
    return new ProblemError("CONFLICT", `${name} was changed concurrently; read it again and retry`);
  }
  return lockedBy(held, `${name} is locked by another holder until ${iso(held.expiresAt)}`, now);
}

/** 423 LOCKED because of `held`, with Retry-After: the seconds until that lock expires. */
export function lockedBy(held: LockRow, detail: string, now: number): ProblemError {
  return new ProblemError("LOCKED", detail, {
    headers: { "retry-after": String(Math.max(1, Math.ceil((held.expiresAt - now) / 1000))) },
  });
}

export function createLockService(deps: LockServiceDeps) {
  const { store, resources, clock, ttlMs, maxTtlMs } = deps;

  /** A requested expiry must lie in the future and within the maximum lifetime. */
  function requestedExpiry(requested: number | undefined, now: number, pointer: string): number | undefined {
    if (requested === undefined) return undefined;
    if (requested <= now || requested > now + maxTtlMs) {
      const detail = `must be in the future and at most ${maxTtlMs / 1000} seconds from now`;
      throw new ProblemError("VALIDATION_FAILED", `lockExpiration ${detail}`, { errors: [{ pointer, detail }] });
    }
    return requested;
  }

  async function acquire(
    claim: Omit<LockClaim, "lockId">,
    principal: Principal,
    expiresAt: number,
    now: number,
  ): Promise<LockRow> {
    const lockId = crypto.randomUUID();
    const result = await store.locks.acquire({
      name: claim.name,
      lockId,
      owner: claim.owner,
      holder: holderOf(principal),
      expiresAt,
      now,
    });
    if (result.acquired) return result.lock;
    const { held } = result;
    const mine = held.owner === claim.owner && held.holder === holderOf(principal);
    throw lockedBy(
      held,
      mine
        ? `${claim.name} is already locked by this owner until ${iso(held.expiresAt)}; it cannot be locked more than once`
        : `${claim.name} is locked by another holder until ${iso(held.expiresAt)}`,
      now,
    );
  }

  async function release(claim: LockClaim, principal: Principal): Promise<void> {
    // An authenticated admin may force the release; with auth off nobody is trusted that far.
    const force = hasRole(principal, "admin") && !principal.anonymous;
    const released = await store.locks.release(claim.name, force ? null : proofOf(claim, principal), clock().getTime());
    if (!released) throw await lockProblem(store, claim.name, proofOf(claim, principal), clock().getTime());
  }

  async function renew(claim: LockClaim, principal: Principal, expiresAt: number): Promise<LockRow> {
    const now = clock().getTime();
    const renewed = await store.locks.renew(claim.name, proofOf(claim, principal), expiresAt, now);
    if (!renewed) throw await lockProblem(store, claim.name, proofOf(claim, principal), now);
    return renewed;
  }

  /**
   * Generic names that are resource UIDs follow the resource's rules (tenant, owner); other names
   * only need the route's role. A UID of a resource that does not exist is just a name.
   */
  async function authorizeName(name: string, principal: Principal, action: "read" | "modify"): Promise<void> {
    const parsed = parseUid(name);
    if (!parsed) return;
    assertTenant(principal, parsed.tenantId);
    if (action === "read") return;
    const row = await store.findByUid(name);
    if (row && row.deletedAt === null) assertMayModify(principal, row);
  }

  return {
    /** lockResourceDTO: the resource must exist and the caller may modify it. */
    async lockResource(uid: string, owner: string, principal: Principal): Promise<{ row: ResourceRow; lock: LockRow }> {
      const row = await resources.findByUid(uid, principal);
      assertMayModify(principal, row);
      const now = clock().getTime();
      return { row, lock: await acquire({ name: uid, owner }, principal, now + ttlMs, now) };
    },

    async unlockResource(claim: LockClaim, principal: Principal): Promise<void> {
      assertMayModify(principal, await resources.findByUid(claim.name, principal));
      await release(claim, principal);
    },

    /** renewResourceDtoLock: always extends to now + TTL. */
    async renewResource(claim: LockClaim, principal: Principal): Promise<{ row: ResourceRow; lock: LockRow }> {
      const row = await resources.findByUid(claim.name, principal);
      assertMayModify(principal, row);
      return { row, lock: await renew(claim, principal, clock().getTime() + ttlMs) };
    },

    async lockName(
      name: string,
      owner: string,
      expiration: number | undefined,
      principal: Principal,
    ): Promise<LockRow> {
      await authorizeName(name, principal, "modify");
      const now = clock().getTime();
      return acquire(
        { name, owner },
        principal,
        requestedExpiry(expiration, now, "/body/lockExpiration") ?? now + ttlMs,
        now,
      );
    },

    async unlockName(claim: LockClaim, principal: Principal): Promise<void> {
      await authorizeName(claim.name, principal, "modify");
      await release(claim, principal);
    },

    /** Renew extends to the requested expiry or now + TTL, whichever is later: it always really extends. */
    async renewName(claim: LockClaim, expiration: number | undefined, principal: Principal): Promise<LockRow> {
      await authorizeName(claim.name, principal, "modify");
      const now = clock().getTime();
      const requested = requestedExpiry(expiration, now, "/body/lockExpiration") ?? 0;
      return renew(claim, principal, Math.max(requested, now + ttlMs));
    },

    /**
     * What the caller may do with a resource and its live lock, if any (null: not locked, no error):
     * what a page shows before offering an action. The routes still decide each action.
     */
    async access(
      uid: string,
      principal: Principal,
    ): Promise<{ row: ResourceRow; lock: LockRow | null; modify: boolean; purge: boolean }> {
      const row = await resources.findByUid(uid, principal);
      const lock = await store.locks.find(uid, clock().getTime());
      return { row, lock, modify: can(principal, "modify", row), purge: hasRole(principal, "admin") };
    },

    /** The live lock on a name; expired locks are free, so they are "not found". */
    async queryName(name: string, principal: Principal): Promise<LockRow> {
      await authorizeName(name, principal, "read");
      const lock = await store.locks.find(name, clock().getTime());
      if (!lock) throw new ProblemError("NOT_FOUND", `${name} is not locked`);
      return lock;
    },
  };
}

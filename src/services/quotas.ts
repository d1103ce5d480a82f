/**
 * Per-tenant quotas: the limits that apply to a tenant (the defaults, or its own override), the
 * charge a write adds to its tenant's usage (enforced by the database in the write's own batch, see
 * UsageCharge), the 507 a refused charge becomes, and the usage document.
 */
import { assertTenant, type Principal } from "../auth/principal.js";
import type { QuotaOptions } from "../app-deps.js";
import { ProblemError } from "../problems.js";
import type { MetadataStore, UsageCharge } from "../metadata/metadata-store.js";

export type QuotaLimits = UsageCharge["limits"];
type QuotaName = keyof QuotaLimits;

const DAY_MS = 86_400_000;
/** The CHECK constraint of `tenant_usage` each quota is enforced by. */
const CONSTRAINTS: Record<string, QuotaName> = {
  quota_bytes: "bytes",
  quota_resources: "resources",
  quota_ingress: "ingressBytesPerDay",
};

/** The constraint named in a failed batch's error (drivers wrap it: the whole cause chain is searched). */
function violatedQuota(err: unknown): QuotaName | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const match = /CHECK constraint failed: (?:\w+\.)?(quota_\w+)/.exec(e.message);
    if (match) return CONSTRAINTS[match[1] as string];
  }
  return undefined;
}

/** 507 naming the quota, its limit, the usage and what the request adds. */
function overQuota(
  tenantId: string,
  quota: QuotaName,
  limit: number,
  used: number,
  adding: number,
  cause?: unknown,
): ProblemError {
  const detail = `tenant ${tenantId} is over its ${quota} quota: limit ${limit}, usage ${used}, this request ${adding}`;
  return new ProblemError("QUOTA_EXCEEDED", detail, { errors: [{ pointer: `/quota/${quota}`, detail }], cause });
}

export type QuotaService = ReturnType<typeof createQuotaService>;

export function createQuotaService({
  store,
  limits,
  clock,
}: {
  store: MetadataStore;
  limits: QuotaOptions;
  clock: () => Date;
}) {
  const today = () => Math.floor(clock().getTime() / DAY_MS);

  function limitsFor(tenantId: string): QuotaLimits {
    return { ...limits.defaults, ...limits.overrides[tenantId] };
  }

  /** Today's counters (yesterday's ingress is 0 today). */
  async function current(tenantId: string) {
    const row = await store.usage(tenantId);
    return {
      bytes: row?.bytes ?? 0,
      resources: row?.resources ?? 0,
      ingressBytesPerDay: row && row.ingressDay === today() ? row.ingressBytes : 0,
    };
  }

  return {
    limitsFor,

    /** What a new resource (its rows' sizes, `received` bytes taken in) adds to its tenant's usage. */
    charge(tenantId: string, rowBytes: number, received: number): UsageCharge {
      return {
        tenantId,
        bytes: rowBytes,
        resources: 1,
        ingressBytes: received,
        day: today(),
        limits: limitsFor(tenantId),
      };
    },

    /** What an unfinished tus upload holds of its tenant's bytes (its Upload-Length) until it finishes or goes. */
    reservation(tenantId: string, bytes: number): UsageCharge {
      return { tenantId, bytes, resources: 0, ingressBytes: 0, day: today(), limits: limitsFor(tenantId) };
    },

    /**
     * Refuses early (507) what cannot fit whatever arrives: a resource of `bytes` declared bytes, when
     * the tenant's usage already leaves less room. Advisory only: the charge in the batch decides.
     */
    async precheck(tenantId: string, bytes: number): Promise<void> {
      const limits = limitsFor(tenantId);
      const used = await current(tenantId);
      const adding: QuotaLimits = { bytes, resources: 1, ingressBytesPerDay: bytes };
      for (const quota of ["bytes", "resources", "ingressBytesPerDay"] as const) {
        if (limits[quota] === 0 || used[quota] + adding[quota] <= limits[quota]) continue;
        throw overQuota(tenantId, quota, limits[quota], used[quota], adding[quota]);
      }
    },

    /** The 507 for a batch refused by a quota, naming it, its limit and the usage; undefined for other errors. */
    async refusal(err: unknown, charge: UsageCharge): Promise<ProblemError | undefined> {
      const quota = violatedQuota(err);
      if (!quota) return undefined;
      const used = (await current(charge.tenantId))[quota];
      const limit = charge.limits[quota];
      const adding = { bytes: charge.bytes, resources: charge.resources, ingressBytesPerDay: charge.ingressBytes }[
        quota
      ];
      return overQuota(charge.tenantId, quota, limit, used, adding, err);
    },

    /**
     * The tenants the caller may see, each with its resources and stored bytes (as in `usage`): a
     * confined caller's own tenants (those without any write yet at zero), every tenant with a write
     * for an admin who is not confined; others are refused, as `usage` refuses them.
     */
    async tenants(principal: Principal) {
      const confined = principal.tenants;
      if (confined === null && !principal.roles.has("admin")) {
        throw new ProblemError("FORBIDDEN", "the tenant list is shown to admins, or to callers confined to tenants");
      }
      const rows = await store.tenantUsages(confined ?? undefined);
      const byId = new Map(rows.map((row) => [row.tenantId, row]));
      const ids = confined ? [...confined].sort() : rows.map((row) => row.tenantId);
      return ids.map((id) => ({
        resourceTenantId: id,
        resources: byId.get(id)?.resources ?? 0,
        bytes: byId.get(id)?.bytes ?? 0,
      }));
    },

    /**
     * The usage document: within the caller's tenants (the confinement every route keeps, admins'
     * included), and for a caller that is not confined only to admins.
     */
    async usage(tenantId: string, principal: Principal) {
      assertTenant(principal, tenantId);
      if (!principal.roles.has("admin") && principal.tenants === null) {
        throw new ProblemError("FORBIDDEN", "usage is shown to admins, or to callers confined to that tenant");
      }
      const [used, revisions] = await Promise.all([current(tenantId), store.revisionCount(tenantId)]);
      const limits = limitsFor(tenantId);
      const orNull = (n: number) => (n === 0 ? null : n);
      return {
        resourceTenantId: tenantId,
        bytes: used.bytes,
        resources: used.resources,
        revisions,
        ingressToday: used.ingressBytesPerDay,
        limits: {
          bytes: orNull(limits.bytes),
          resources: orNull(limits.resources),
          ingressBytesPerDay: orNull(limits.ingressBytesPerDay),
        },
      };
    },
  };
}

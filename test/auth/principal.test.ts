// Principal mapping from Keycloak claims, role implication, ownership and tenant confinement.
import { describe, expect, it } from "vitest";
import {
  ANONYMOUS_PRINCIPAL,
  assertCan,
  assertTenant,
  can,
  holderOf,
  ownershipOf,
  type Principal,
  principalFromClaims,
  type Role,
} from "../../src/auth/principal.js";
import { thrownProblem } from "../helpers/problems.js";

const mapping = { clientId: "cms-server" };
const withRealmRoles = { clientId: "cms-server", realmRoles: true };
const rolesOf = (p: Principal) => [...p.roles].sort();

const ISS = "https://idp.example/realms/CMS";
/** A resource's recorded owner: subject and issuer. */
const owned = (owner: string | null, ownerIssuer: string | null = ISS) => ({ owner, ownerIssuer });

const principal = (roles: Role[], subject = "alice", tenants: string[] | null = null): Principal => ({
  subject,
  issuer: ISS,
  roles: new Set(roles),
  tenants,
  anonymous: false,
});

describe("principalFromClaims", () => {
  it("reads roles from the own client only: realm roles of a shared realm grant nothing by default", () => {
    const claims = {
      iss: ISS,
      sub: "u-1",
      realm_access: { roles: ["admin"] },
      resource_access: { "cms-server": { roles: ["consumer"] }, "other-app": { roles: ["admin"] } },
    };
    expect(rolesOf(principalFromClaims(claims, mapping))).toEqual(["consumer"]);
    expect(
      principalFromClaims({ iss: ISS, sub: "u-2", realm_access: { roles: ["admin", "creator", "consumer"] } }, mapping)
        .roles.size,
    ).toBe(0);
  });

  it("unions realm and own-client roles when realm roles are opted in, ignores unknown roles and other clients", () => {
    const p = principalFromClaims(
      {
        iss: ISS,
        sub: "u-1",
        preferred_username: "alice",
        realm_access: { roles: ["offline_access", "consumer", "uma_authorization"] },
        resource_access: { "cms-server": { roles: ["creator", 42] }, account: { roles: ["admin"] } },
      },
      withRealmRoles,
    );
    expect(p).toMatchObject({ subject: "u-1", username: "alice", tenants: null, anonymous: false });
    expect(rolesOf(p)).toEqual(["consumer", "creator"]);
  });

  it("closes roles under implication: admin ⊇ creator ⊇ consumer", () => {
    expect(
      rolesOf(principalFromClaims({ iss: ISS, sub: "a", realm_access: { roles: ["admin"] } }, withRealmRoles)),
    ).toEqual(["admin", "consumer", "creator"]);
    expect(
      rolesOf(
        principalFromClaims({ iss: ISS, sub: "c", resource_access: { "cms-server": { roles: ["creator"] } } }, mapping),
      ),
    ).toEqual(["consumer", "creator"]);
  });

  it("grants nothing (but does not fail) for malformed role claims", () => {
    for (const extra of [
      { realm_access: "admin" },
      { realm_access: { roles: "admin" } },
      { resource_access: { "cms-server": ["admin"] } },
      { resource_access: [] },
    ]) {
      expect(principalFromClaims({ iss: ISS, sub: "x", ...extra }, withRealmRoles).roles.size).toBe(0);
    }
    // A client id that is also an Object.prototype member must not read inherited values.
    expect(
      principalFromClaims({ iss: ISS, sub: "x", resource_access: {} }, { clientId: "constructor" }).roles.size,
    ).toBe(0);
  });

  it("requires a non-empty string sub (401 invalid_token)", () => {
    for (const sub of [undefined, "", 7]) {
      const err = thrownProblem(() =>
        principalFromClaims({ iss: ISS, sub, realm_access: { roles: ["admin"] } }, mapping),
      );
      expect(err.code).toBe("UNAUTHENTICATED");
      expect(err.headers?.["www-authenticate"]).toMatch(/^Bearer realm="CMS", error="invalid_token"/);
    }
    // The issuer is half of the identity: a principal is never built without it.
    expect(
      thrownProblem(() =>
        principalFromClaims({ sub: "x", resource_access: { "cms-server": { roles: ["admin"] } } }, mapping),
      ).code,
    ).toBe("UNAUTHENTICATED");
  });

  it("reads the tenant claim as a string or a list; absent means unrestricted", () => {
    expect(principalFromClaims({ iss: ISS, sub: "x" }, mapping).tenants).toBeNull();
    expect(principalFromClaims({ iss: ISS, sub: "x", tenants: "t1" }, mapping).tenants).toEqual(["t1"]);
    expect(principalFromClaims({ iss: ISS, sub: "x", tenants: ["t1", "t2", "t1"] }, mapping).tenants).toEqual([
      "t1",
      "t2",
    ]);
    expect(principalFromClaims({ iss: ISS, sub: "x", tenants: [] }, mapping).tenants).toEqual([]);
    const custom = { ...mapping, tenantClaim: "org" };
    expect(principalFromClaims({ iss: ISS, sub: "x", org: "acme", tenants: ["t1"] }, custom).tenants).toEqual(["acme"]);
    expect(principalFromClaims({ iss: ISS, sub: "x", tenants: ["t1"] }, custom).tenants).toBeNull();
  });

  it("refuses a malformed tenant claim instead of treating it as unrestricted", () => {
    for (const tenants of [null, 5, {}, [1], [""], ["ok", null]]) {
      expect(thrownProblem(() => principalFromClaims({ iss: ISS, sub: "x", tenants }, mapping)).code).toBe(
        "UNAUTHENTICATED",
      );
    }
  });
});

describe("can / assertCan", () => {
  it("consumer reads only", () => {
    const p = principal(["consumer"]);
    expect([can(p, "read"), can(p, "create"), can(p, "modify", owned("alice"))]).toEqual([true, false, false]);
  });

  it("creator creates and modifies only what it owns", () => {
    const p = principal(["creator", "consumer"]);
    expect(can(p, "read")).toBe(true);
    expect(can(p, "create")).toBe(true);
    expect(can(p, "modify", owned("alice"))).toBe(true);
    expect(can(p, "modify", owned("bob"))).toBe(false);
    expect(can(p, "modify", owned(null, null))).toBe(false);
    expect(can(p, "modify")).toBe(false);
  });

  it("an owner is issuer + subject: the same sub from another issuer, or a row without an issuer, is not the owner", () => {
    const p = principal(["creator", "consumer"]);
    expect(can(p, "modify", owned("alice", "https://other-idp.example/realms/CMS"))).toBe(false);
    expect(can(p, "modify", owned("alice", null))).toBe(false);
    expect(ownershipOf(p)).toEqual(owned("alice"));
    expect(holderOf(p)).not.toBe(holderOf({ ...p, issuer: "https://other-idp.example/realms/CMS" }));
    expect(holderOf(ANONYMOUS_PRINCIPAL)).toBeNull();
  });

  it("admin modifies anything, any owner", () => {
    const p = principal(["admin", "creator", "consumer"]);
    expect(can(p, "modify", owned("bob"))).toBe(true);
    expect(can(p, "modify", owned(null, null))).toBe(true);
  });

  it("the anonymous principal (auth off) may do everything, everywhere", () => {
    expect(ANONYMOUS_PRINCIPAL).toMatchObject({ subject: null, tenants: null, anonymous: true });
    expect(rolesOf(ANONYMOUS_PRINCIPAL)).toEqual(["admin", "consumer", "creator"]);
    expect(can(ANONYMOUS_PRINCIPAL, "modify", owned("someone"))).toBe(true);
    expect(() => assertTenant(ANONYMOUS_PRINCIPAL, "any")).not.toThrow();
  });

  it("assertCan: insufficient_scope when a role is missing, plain 403 for someone else's resource", () => {
    const missingRole = thrownProblem(() => assertCan(principal(["consumer"]), "create"));
    expect(missingRole.status).toBe(403);
    expect(missingRole.headers?.["www-authenticate"]).toBe(
      'Bearer realm="CMS", error="insufficient_scope", error_description="the creator role is required"',
    );
    const notOwner = thrownProblem(() => assertCan(principal(["creator", "consumer"]), "modify", owned("bob")));
    expect(notOwner.code).toBe("FORBIDDEN");
    expect(notOwner.headers?.["www-authenticate"]).toBeUndefined();
    expect(() => assertCan(principal(["creator", "consumer"]), "modify", owned("alice"))).not.toThrow();
  });
});

describe("assertTenant", () => {
  it("confines a tenant-bound caller to its tenants (403 otherwise)", () => {
    const p = principal(["admin", "creator", "consumer"], "alice", ["t1", "t2"]);
    expect(() => assertTenant(p, "t2")).not.toThrow();
    const err = thrownProblem(() => assertTenant(p, "t3"));
    expect(err.code).toBe("FORBIDDEN");
    expect(err.status).toBe(403);
    expect(thrownProblem(() => assertTenant(principal(["consumer"], "a", []), "t1")).code).toBe("FORBIDDEN");
    expect(() => assertTenant(principal(["consumer"]), "whatever")).not.toThrow();
  });
});

/**
 * The access rules of the routes in one place: the guard each route is bound to (routes/router.ts
 * `guarded`), with auth on or off, and how content may be read (token, signed link, or public).
 */
import type { MiddlewareHandler } from "hono";
import { ProblemError } from "../problems.js";
import { ANONYMOUS_PRINCIPAL, type Role } from "./principal.js";
import { authenticate, requireRole } from "./require-auth.js";
import { type LinkSigner, signedTarget } from "./signed-links.js";
import type { TokenVerifier } from "./verify-token.js";

export interface GuardOptions {
  /** null = auth off: everything is allowed as the anonymous principal. */
  verifier: TokenVerifier | null;
  tenantClaim: string;
  /** CMS_AUTH_REALM_ROLES: count realm roles too, not only the client roles of this server. */
  realmRoles: boolean;
  links: LinkSigner;
  publicRead: boolean;
  clock: () => Date;
}

export interface Guards {
  /** Verifies the bearer token and requires `role`. */
  role(role: Role): MiddlewareHandler;
  /** Content reads (getData & co.): a valid signed link, or open reads, or a token with the consumer role. */
  read: MiddlewareHandler;
}

/**
 * Whether content may be read with no credentials at all: auth off, or CMS_PUBLIC_READ. The one
 * statement of the rule: the read guard and the Node and Bun servers (for their getData fast paths,
 * delivery/runtime-reads.ts) all use it.
 */
export const readsAreOpen = ({ verifier, publicRead }: Pick<GuardOptions, "verifier" | "publicRead">) =>
  verifier === null || publicRead;

export function createGuards(options: GuardOptions): Guards {
  const authenticated = authenticate(options.verifier, {
    tenantClaim: options.tenantClaim,
    realmRoles: options.realmRoles,
  });
  const role = (r: Role): MiddlewareHandler => {
    const hasRole = requireRole(r);
    return (c, next) =>
      authenticated(c, async () => {
        await hasRole(c, next);
      });
  };
  const consumer = role("consumer");
  const open = readsAreOpen(options);

  const signedLinkOrToken: MiddlewareHandler = async (c, next) => {
    const url = new URL(c.req.url);
    const expires = url.searchParams.get("expires") ?? undefined;
    const signature = url.searchParams.get("signature") ?? undefined;
    if (expires !== undefined || signature !== undefined) {
      const now = Math.floor(options.clock().getTime() / 1000);
      if (
        !(await options.links.verify(signedTarget(url.pathname, url.searchParams.get("v")), expires, signature, now))
      ) {
        throw new ProblemError("FORBIDDEN", "the signed link is invalid, for another resource, or expired");
      }
      // The signature binds this exact path, so the link reader may read it whatever its tenant.
      c.set("principal", ANONYMOUS_PRINCIPAL);
      c.set("signedLinkSeconds", Number(expires) - now); // the answer's Cache-Control may not outlive the link
      return next();
    }
    if (open) {
      c.set("principal", ANONYMOUS_PRINCIPAL);
      return next();
    }
    return consumer(c, next);
  };

  return { role, read: signedLinkOrToken };
}

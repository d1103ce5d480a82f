/**
 * The access rules of the routes in one place: which middleware a route group mounts when auth is
 * on or off, and how getData may be read (token, signed link, or public).
 */
import type { MiddlewareHandler } from "hono";
import { ProblemError } from "../problems.js";
import { ANONYMOUS_PRINCIPAL, type Role } from "./principal.js";
import { authenticate, requireRole } from "./require-auth.js";
import type { LinkSigner } from "./signed-links.js";
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
  role(role: Role): MiddlewareHandler[];
  /** getData: a valid signed link, or public read, or a token with the consumer role. */
  read: MiddlewareHandler[];
}

export function createGuards(options: GuardOptions): Guards {
  const authenticated = authenticate(options.verifier, { tenantClaim: options.tenantClaim, realmRoles: options.realmRoles });
  const role = (r: Role) => [authenticated, requireRole(r)] as MiddlewareHandler[];
  const consumer = role("consumer");

  const signedLinkOrToken: MiddlewareHandler = async (c, next) => {
    const url = new URL(c.req.url);
    const expires = url.searchParams.get("expires") ?? undefined;
    const signature = url.searchParams.get("signature") ?? undefined;
    if (expires !== undefined || signature !== undefined) {
      const now = Math.floor(options.clock().getTime() / 1000);
      if (!(await options.links.verify(url.pathname, expires, signature, now))) {
        throw new ProblemError("FORBIDDEN", "the signed link is invalid, for another resource, or expired");
      }
      // The signature binds this exact path, so the link reader may read it whatever its tenant.
      c.set("principal", ANONYMOUS_PRINCIPAL);
      return next();
    }
    if (options.publicRead || options.verifier === null) {
      c.set("principal", ANONYMOUS_PRINCIPAL);
      return next();
    }
    // Run the token chain, then continue with this request's own next().
    const [auth, requireConsumer] = consumer as [MiddlewareHandler, MiddlewareHandler];
    await auth(c, async () => {
      await requireConsumer(c, next);
    });
  };

  return { role, read: [signedLinkOrToken] };
}

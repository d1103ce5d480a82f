/** The Hono environment shared by every router: per-request values only (services come via factories). */
import type { Principal } from "../auth/principal.js";
import type { Logger } from "../lib/logger.js";

export interface AppEnv {
  Variables: {
    requestId: string;
    logger: Logger;
    /** Set by the auth guards; the anonymous principal when auth is off. */
    principal: Principal;
    /** Set by the read guard for a request authorised by a signed link: the seconds the link has left. */
    signedLinkSeconds?: number;
  };
}

/** The Hono environment shared by every router: per-request values only (services come via factories). */
import type { Principal } from "../auth/principal.js";
import type { Logger } from "../lib/logger.js";
import type { Metrics } from "../metrics/metrics.js";

export interface AppEnv {
  Variables: {
    requestId: string;
    logger: Logger;
    /** Where problem answers are counted (set by requestContext; absent in apps built without it). */
    metrics?: Pick<Metrics, "problem">;
    /** Set by the auth guards; the anonymous principal when auth is off. */
    principal: Principal;
    /** Set by the read guard for a request authorised by a signed link: the seconds the link has left. */
    signedLinkSeconds?: number;
  };
}

/** The Hono environment shared by every router: per-request values only (services come via factories). */
import type { Logger } from "./lib/logger.js";

export interface AppEnv {
  Variables: {
    requestId: string;
    logger: Logger;
  };
}

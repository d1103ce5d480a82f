/** This process's instance id for logs and metrics: CMS_INSTANCE_ID, or host name and process id. */
import { hostname } from "node:os";
import type { Config } from "../../config.js";

export const instanceIdOf = (config: Pick<Config, "CMS_INSTANCE_ID">) =>
  config.CMS_INSTANCE_ID ?? `${hostname()}:${process.pid}`;

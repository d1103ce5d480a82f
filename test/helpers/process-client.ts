/** A cmsClient (cms-client.ts) on a spawned server process, which the global fetch reaches by URL. */
import { type Client, cmsClient } from "./cms-client.js";
import type { ServerProcess } from "./spawn-server.js";

export const processClient = (server: Pick<ServerProcess, "url">, tenant: string): Client =>
  cmsClient({ url: (path) => server.url + path }, tenant);

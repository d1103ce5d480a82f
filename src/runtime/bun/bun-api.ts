/**
 * The few Bun APIs the Bun entry uses, typed here (the project does not ship Bun's type package).
 * Only ever evaluated on Bun.
 */

export interface BunServer {
  readonly port: number;
  readonly hostname: string;
  /** Stops listening; with `true`, also closes the connections still open. */
  stop(closeActiveConnections?: boolean): Promise<void>;
}

export interface BunServeOptions {
  hostname: string;
  port: number;
  /** Seconds a connection may stay idle (no bytes either way) before Bun closes it; 255 at most. */
  idleTimeout: number;
  /** Bun refuses larger request bodies itself (default 128 MiB); the app enforces its own limits. */
  maxRequestBodySize: number;
  fetch(request: Request, server: BunServer): Response | Promise<Response>;
  error(err: Error): Response;
}

export interface BunApi {
  /** A lazily read file; `slice` gives a sized Blob that Bun.serve sends with sendfile. */
  file(path: string): Blob;
  serve(options: BunServeOptions): BunServer;
}

export const bunApi = (): BunApi => (globalThis as unknown as { Bun: BunApi }).Bun;

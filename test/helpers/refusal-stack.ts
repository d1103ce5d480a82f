/**
 * Servers that refuse a 100 MB streamed upload in each way issue 25 §3 names (401 no token, 403
 * wrong role, 413 over the size limit, 507 over the quota), for the curl, typed-client and CLI
 * tests: the dev IdP and the built server (a process of its own, as deployed: a server in the test's
 * own process shares its event loop with the client and hides the race) on 127.0.0.1 with auth on.
 * Two servers: the one for 413 has a 16 MiB CMS_MAX_RESOURCE_BYTES; on the other a 100 MB upload
 * is within the limit, so its tenant "full" (a 10 MB bytes quota) gets the 507.
 */
import { mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { startIdp } from "../../scripts/idp/server.js";
import { passwordGrant } from "./auth-stack.js";
import { type ServerProcess, type ServerRuntime, spawnServer } from "./spawn-server.js";

/** The body every refusal is tested with: 100 MB, made as a stream or a sparse file, never held. */
export const BODY_BYTES = 100 * 1024 * 1024;
const SECRET = "refusal-test-secret";

export interface Refusal {
  kind: string;
  status: number;
  code: string;
  baseUrl: string;
  tenant: string;
  /** The bearer token to send, if any. */
  token?: string;
}

export interface RefusalStack {
  refusals: Refusal[];
  /** A sparse file of BODY_BYTES in the stack's temp dir (for curl and `cms put`). */
  bigFile: string;
  dir: string;
  /** The log lines (JSON) of the server at `baseUrl` so far, e.g. its `request body left unread` lines. */
  logsOf(baseUrl: string): Record<string, unknown>[];
  /** The server at `baseUrl`: its log lines as they come (`waitForLine`). */
  serverAt(baseUrl: string): ServerProcess;
  close(): Promise<void>;
}

export async function startRefusalStack(runtime: ServerRuntime = "node"): Promise<RefusalStack> {
  const dir = await mkdtemp(join(tmpdir(), "cms-refusal-"));
  const idp = await startIdp({
    port: 0,
    clientSecret: SECRET,
    log: () => {},
    users: [
      { username: "creator", password: "creator", roles: ["creator"], tenants: ["acme"] },
      { username: "full-creator", password: "full-creator", roles: ["creator"], tenants: ["full"] },
      { username: "no-roles", password: "no-roles", roles: [] },
    ],
  });
  const env = (name: string, extra: Record<string, string>) => ({
    CMS_VOLUME: join(dir, name, "volume"),
    CMS_DATABASE_URL: `file:${join(dir, `${name}.db`)}`,
    CMS_AUTH_ENABLED: "true",
    CMS_AUTH_ISSUER: idp.issuer,
    CMS_LINK_SECRET: "a-link-secret-of-at-least-32-characters!",
    CMS_LOG_LEVEL: "debug",
    ...extra,
  });
  const servers: ServerProcess[] = [];
  try {
    const [main, limited] = await Promise.all([
      spawnServer(env("main", { CMS_QUOTA_OVERRIDES: JSON.stringify({ full: { bytes: 10_000_000 } }) }), runtime),
      spawnServer(env("limited", { CMS_MAX_RESOURCE_BYTES: String(16 * 1024 * 1024) }), runtime),
    ]);
    servers.push(main, limited);
    const [creator, fullCreator, noRoles] = await Promise.all(
      ["creator", "full-creator", "no-roles"].map((u) => passwordGrant(idp, SECRET, u)),
    );
    const bigFile = join(dir, "big.bin");
    const file = await open(bigFile, "w");
    await file.truncate(BODY_BYTES);
    await file.close();
    return {
      refusals: [
        { kind: "no token, auth on", status: 401, code: "UNAUTHENTICATED", baseUrl: main.url, tenant: "acme" },
        {
          kind: "a token without the creator role",
          status: 403,
          code: "FORBIDDEN",
          baseUrl: main.url,
          tenant: "acme",
          token: noRoles,
        },
        {
          kind: "over CMS_MAX_RESOURCE_BYTES",
          status: 413,
          code: "PAYLOAD_TOO_LARGE",
          baseUrl: limited.url,
          tenant: "acme",
          token: creator,
        },
        {
          kind: "over the tenant's bytes quota",
          status: 507,
          code: "QUOTA_EXCEEDED",
          baseUrl: main.url,
          tenant: "full",
          token: fullCreator,
        },
      ],
      bigFile,
      dir,
      logsOf(baseUrl) {
        const server = servers.find((s) => s.url === baseUrl);
        return (server?.stdout ?? []).map((line) => JSON.parse(line) as Record<string, unknown>);
      },
      serverAt(baseUrl) {
        const server = servers.find((s) => s.url === baseUrl);
        if (!server) throw new Error(`no server of the stack at ${baseUrl}`);
        return server;
      },
      async close() {
        await Promise.all(servers.map((s) => s.stop()));
        await idp.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await Promise.all(servers.map((s) => s.stop()));
    await idp.close();
    throw err;
  }
}

/** What the server logs when it closed a connection whose request body it had not read. */
export interface UnreadBodyLine {
  receivedBytes: number;
  lingeredMs: number;
  outcome: string;
}

/**
 * Runs `attempt` and returns what it gave with the server's `request body left unread` line written
 * for it (the bytes the server read and how long it kept reading). Every attempt that uses this
 * streams a 100 MB body the server answers before reading it, so the server always closes that
 * connection after lingering and writes the line (src/runtime/node/unread-body.ts): it is awaited
 * as it arrives, and its absence fails the test (by the test's timeout; at once if the server exits).
 * Attempts run at once against one server may each take the first line that comes after their start.
 */
export async function withServerFigures<T>(stack: RefusalStack, baseUrl: string, attempt: () => Promise<T>) {
  const server = stack.serverAt(baseUrl);
  const written = server.waitForLine((l) => l.msg === "request body left unread", server.stdout.length);
  written.catch(() => {}); // awaited below; if `attempt` throws, the stack's close must not reject it unhandled
  const started = performance.now();
  const result = await attempt();
  const ms = Math.round(performance.now() - started);
  return { result, ms, server: (await written) as unknown as UnreadBodyLine };
}

/**
 * The stack for one test file: started before its tests, closed after them, and the figures they
 * pushed printed under `title`. `stack()` is the running stack (inside tests only).
 */
export function refusalStackPerFile(title: string) {
  const figures: string[] = [];
  let stack: RefusalStack | undefined;
  beforeAll(async () => {
    stack = await startRefusalStack();
  }, 60_000);
  afterAll(async () => {
    if (figures.length > 0) console.info(`${title}:\n${figures.join("\n")}`);
    await stack?.close();
  });
  return { figures, stack: () => stack as RefusalStack };
}

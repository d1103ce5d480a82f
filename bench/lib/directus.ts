/**
 * Directus as the images scenario's reference, as a user runs it: the npm package installed in a
 * folder outside this project (BENCH_DIRECTUS_DIR, e.g. `npm install directus@11.3.5` there; the
 * bench never installs it), SQLite metadata, local file storage, files readable by the public
 * policy. `prepareDirectus` says why it cannot run instead of throwing, so the scenario measures
 * the service alone and prints the reason.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { type Server, startServer } from "./proc.js";
import { freePort, http, log } from "./util.js";

/** The version issue 30 compares with. */
export const DIRECTUS_VERSION = "11.3.5";
/** Directus 11's built-in public policy (its id is fixed in the system data). */
const PUBLIC_POLICY = "abf8a154-5b1c-4a46-ac9c-7300570f4f17";
const ADMIN = { email: "bench@example.org", password: "bench-password-not-secret" };

export type DirectusSetup = { ok: true; dir: string; version: string } | { ok: false; reason: string };

/** Where Directus is installed (BENCH_DIRECTUS_DIR), or why it cannot be used. */
export function findDirectus(): DirectusSetup {
  const dir = process.env.BENCH_DIRECTUS_DIR;
  if (!dir) return { ok: false, reason: "BENCH_DIRECTUS_DIR is not set (a folder with `npm install directus@11.3.5`)" };
  const manifest = path.join(dir, "node_modules/directus/package.json");
  if (!existsSync(manifest)) return { ok: false, reason: `${manifest} does not exist` };
  const { version } = JSON.parse(readFileSync(manifest, "utf8")) as { version: string };
  // Its SQLite driver is a native addon; an install whose build failed has no binding to load.
  const sqlite = path.join(dir, "node_modules/sqlite3/build/Release/node_sqlite3.node");
  if (!existsSync(sqlite)) return { ok: false, reason: `the sqlite3 driver was not built (${sqlite} is missing)` };
  return { ok: true, dir, version };
}

export interface Directus {
  server: Server;
  /** POSTs a file (admin token) and returns its id; the file is then public. */
  upload(bytes: Buffer, name: string, type: string): Promise<string>;
}

/** Bootstraps a fresh SQLite project in `workDir` and starts Directus on 127.0.0.1. */
export async function startDirectus(dir: string, workDir: string): Promise<Directus> {
  mkdirSync(path.join(workDir, "uploads"), { recursive: true });
  const port = await freePort();
  const env = {
    HOST: "127.0.0.1",
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DB_CLIENT: "sqlite3",
    DB_FILENAME: path.join(workDir, "directus.db"),
    STORAGE_LOCATIONS: "local",
    STORAGE_LOCAL_ROOT: path.join(workDir, "uploads"),
    KEY: "bench-key-0123456789",
    SECRET: "bench-secret-0123456789-0123456789",
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    // As offline as the machine: no telemetry, no marketplace, logs only what is wrong.
    TELEMETRY: "false",
    MARKETPLACE_TRUST: "sandbox",
    LOG_LEVEL: "warn",
    CACHE_ENABLED: "false",
    RATE_LIMITER_ENABLED: "false",
    // Its load shedding (503 "Under pressure" past an event-loop delay) would turn a wrk run on a busy
    // machine into a count of refusals; the service sheds no load either.
    PRESSURE_LIMITER_ENABLED: "false",
    NODE_ENV: "production",
  };
  const cli = path.join(dir, "node_modules/directus/cli.js");
  // Creates the SQLite schema and the admin user (what `npx directus bootstrap` does for a user).
  await runToEnd(process.execPath, [cli, "bootstrap"], workDir, env, 300_000);
  const server = await startServer({
    name: "directus",
    command: process.execPath,
    args: [cli, "start"],
    cwd: workDir,
    env,
    port,
    readyPath: "/server/health",
    timeoutMs: 120_000,
  });
  const token = await login(server.url);
  const auth = { authorization: `Bearer ${token}` };
  // "A public file": the public policy may read directus_files (Settings → Access Policies → Public).
  const granted = await http(`${server.url}/permissions`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({
      policy: PUBLIC_POLICY,
      collection: "directus_files",
      action: "read",
      fields: ["*"],
      permissions: {},
    }),
  });
  if (granted.status !== 200 && granted.status !== 204) {
    throw new Error(
      `Directus: granting public read failed: ${granted.status} ${granted.body.toString().slice(0, 300)}`,
    );
  }
  log(`Directus listening on ${server.url}`);
  return {
    server,
    async upload(bytes, name, type) {
      const form = new FormData();
      form.set("file", new Blob([new Uint8Array(bytes)], { type }), name);
      const res = await fetch(`${server.url}/files`, { method: "POST", headers: auth, body: form });
      if (res.status !== 200) throw new Error(`Directus upload: ${res.status} ${(await res.text()).slice(0, 300)}`);
      return ((await res.json()) as { data: { id: string } }).data.id;
    },
  };
}

async function login(url: string): Promise<string> {
  const res = await http(`${url}/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(ADMIN),
  });
  if (res.status !== 200) throw new Error(`Directus login: ${res.status} ${res.body.toString().slice(0, 300)}`);
  return (JSON.parse(res.body.toString()) as { data: { access_token: string } }).data.access_token;
}

/** Runs a command to its end (bootstrap); rejects with its output on a non-zero exit or after `timeoutMs`. */
function runToEnd(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
    child.stderr.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`directus ${args.slice(1).join(" ")} exited ${code ?? signal}: ${output}`));
    });
  });
}

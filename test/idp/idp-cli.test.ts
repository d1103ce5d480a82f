/**
 * `npm run idp` as a user runs it (node --import tsx scripts/idp/main.ts), on a free loopback port:
 * CMS_IDP_USERS names a small JSON users file, so the dev IdP can issue the `tenants` claim the README
 * documents (and add or replace users). A bad file stops it with one line naming the setting.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
let dir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-idp-cli-"));
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
  await rm(dir, { recursive: true, force: true });
});

function runIdp(env: Record<string, string>) {
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/idp/main.ts"], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", CMS_IDP_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d) => (stdout += d));
  child.stderr?.on("data", (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  const issuer = new Promise<string>((resolve, reject) => {
    // A bound, not a wait: tsx compiles the IdP's sources on a cold start, which took past 20 s at load 13.
    const timer = setTimeout(() => reject(new Error(`no issuer line within 60 s: ${stdout} ${stderr}`)), 60_000);
    child.stdout?.on("data", () => {
      const match = /^issuer:\s+(\S+)$/m.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`exited: ${stderr}`));
    });
  });
  return { child, issuer, exited, stderr: () => stderr };
}

async function passwordToken(issuer: string, username: string, password: string) {
  const res = await fetch(`${issuer}/protocol/openid-connect/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      client_id: "cms-server",
      client_secret: "cms-server-dev-secret",
      username,
      password,
      grant_type: "password",
    }),
  });
  expect(res.status).toBe(200);
  return decodeJwt(((await res.json()) as { access_token: string }).access_token);
}

describe("npm run idp on the Node versions the README supports", () => {
  it('starts without oidc-provider\'s "Unsupported runtime" warning (Node 20 is supported here)', async () => {
    const idp = runIdp({});
    await idp.issuer;
    idp.child.kill("SIGTERM");
    expect(await idp.exited).toBe(0);
    expect(idp.stderr()).not.toContain("Unsupported runtime");
  }, 90_000);
});

describe("npm run idp with CMS_IDP_USERS", () => {
  it("issues the tenants claim (and roles) of users from the file; a default user can be confined too", async () => {
    const file = join(dir, "users.json");
    await writeFile(
      file,
      JSON.stringify([
        { username: "acme-creator", password: "acme-pw", roles: ["creator"], tenants: ["acme", "globex"] },
        { username: "cms-consumer", password: "cms-consumer", roles: ["consumer"], tenants: ["acme"] },
      ]),
    );
    const idp = runIdp({ CMS_IDP_USERS: file });
    const issuer = await idp.issuer;
    expect(await passwordToken(issuer, "acme-creator", "acme-pw")).toMatchObject({
      sub: "acme-creator",
      tenants: ["acme", "globex"],
      resource_access: { "cms-server": { roles: ["creator"] } },
    });
    expect(await passwordToken(issuer, "cms-consumer", "cms-consumer")).toMatchObject({ tenants: ["acme"] });
    expect(await passwordToken(issuer, "cms-admin", "cms-admin")).not.toHaveProperty("tenants");
    idp.child.kill("SIGTERM");
    expect(await idp.exited).toBe(0);
  }, 90_000);

  it("stops with exit code 1 and a line naming CMS_IDP_USERS for a bad file", async () => {
    const file = join(dir, "bad.json");
    await writeFile(file, JSON.stringify([{ username: "x", password: "x", roles: ["creator"], tenants: "acme" }]));
    const idp = runIdp({ CMS_IDP_USERS: file });
    idp.issuer.catch(() => {});
    expect(await idp.exited).toBe(1);
    expect(idp.stderr()).toMatch(/CMS_IDP_USERS.*tenants/);
  }, 90_000);
});

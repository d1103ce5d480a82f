/**
 * The owner of a resource is the token's issuer and subject together (issue 10 §2): two identity
 * providers — or a change of provider — both have a user with `sub` "cms-creator" (the dev IdP's
 * subjects are usernames), and one must never become the owner of the other's resources. Two real
 * dev IdPs on loopback, one database file and volume shared by servers configured for each.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningIdp, startIdp } from "../../scripts/idp/server.js";
import { bearer } from "../helpers/auth-stack.js";
import { json, startTestApp, type TestApp } from "../helpers/test-app.js";

const SECRET = "owner-identity-secret";
let idpA: RunningIdp;
let idpB: RunningIdp;
let dir: string;
let databaseUrl: string;

beforeAll(async () => {
  [idpA, idpB] = await Promise.all(
    [0, 1].map(() => startIdp({ port: 0, clientSecret: SECRET, log: () => {} })) as [
      Promise<RunningIdp>,
      Promise<RunningIdp>,
    ],
  );
  dir = await mkdtemp(join(tmpdir(), "cms-owner-"));
  databaseUrl = `file:${join(dir, "cms.db")}`;
});
afterAll(async () => {
  await Promise.all([idpA.close(), idpB.close()]);
  await rm(dir, { recursive: true, force: true });
});

/** A server trusting `idp`, on the shared database and volume. */
const serverFor = (idp: RunningIdp) =>
  startTestApp(
    {
      CMS_AUTH_ENABLED: "true",
      CMS_AUTH_ISSUER: idp.issuer,
      CMS_DATABASE_URL: databaseUrl,
      CMS_VOLUME: join(dir, "volume"),
    },
    { transport: "in-process" },
  );

async function token(idp: RunningIdp, username: string): Promise<string> {
  const res = await fetch(`${idp.issuer}/protocol/openid-connect/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      client_id: "cms-server",
      client_secret: SECRET,
      username,
      password: username,
      grant_type: "password",
    }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

const call = (app: TestApp, bearerToken: string, path: string, body: unknown) => {
  const init = json(body);
  return app.fetch(app.url(`/cms/v1.0/${path}`), {
    ...init,
    headers: { ...(init.headers as Record<string, string>), ...bearer(bearerToken) },
  });
};

/** Takes and releases a lock: the modify right an owner (or admin) has. */
async function lockStatus(app: TestApp, bearerToken: string, resourceUID: string): Promise<number> {
  const res = await call(app, bearerToken, "lockResourceDTO", { resourceUID, author: "tester" });
  if (res.status === 200) {
    const { lockID } = (await res.json()) as { lockID: string };
    expect((await call(app, bearerToken, "unlockResourceDTO", { resourceUID, author: "tester", lockID })).status).toBe(
      204,
    );
  }
  return res.status;
}

async function ownerColumns(uid: string) {
  const client = createClient({ url: databaseUrl });
  try {
    const { rows } = await client.execute({
      sql: "select owner, owner_issuer from resources where uid = ?",
      args: [uid],
    });
    return rows[0];
  } finally {
    client.close();
  }
}

describe("owner identity = issuer + subject", () => {
  let uid: string;

  it("records the creating token's issuer and subject", async () => {
    const app = await serverFor(idpA);
    try {
      const res = await call(app, await token(idpA, "cms-creator"), "createResource", {
        resourceAuthor: "a",
        resourceBinary: btoa("mine"),
        resourceMediaType: "text/plain",
        resourceName: "a.txt",
        resourceTenantId: "owners",
      });
      expect(res.status).toBe(201);
      uid = ((await res.json()) as { resourceUID: string }).resourceUID;
      expect(await ownerColumns(uid)).toMatchObject({ owner: "cms-creator", owner_issuer: idpA.issuer });
      expect(await lockStatus(app, await token(idpA, "cms-creator"), uid)).toBe(200);
    } finally {
      await app.close();
    }
  });

  it("the same sub from another issuer is not the owner", async () => {
    const app = await serverFor(idpB);
    try {
      const res = await call(app, await token(idpB, "cms-creator"), "lockResourceDTO", {
        resourceUID: uid,
        author: "intruder",
      });
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ code: "FORBIDDEN" });
      // An admin of the new issuer still may.
      expect(await lockStatus(app, await token(idpB, "cms-admin"), uid)).toBe(200);
    } finally {
      await app.close();
    }
  });

  it("a row written before owners had an issuer is adopted by the issuer configured at start-up", async () => {
    const client = createClient({ url: databaseUrl });
    await client.execute({ sql: "update resources set owner_issuer = null where uid = ?", args: [uid] });
    // As a database migrated while it held such rows: the adoption is not recorded done (data_fixes).
    await client.execute("delete from data_fixes");
    client.close();
    const app = await serverFor(idpA);
    try {
      expect(await ownerColumns(uid)).toMatchObject({ owner: "cms-creator", owner_issuer: idpA.issuer });
      expect(await lockStatus(app, await token(idpA, "cms-creator"), uid)).toBe(200);
    } finally {
      await app.close();
    }
  });
});

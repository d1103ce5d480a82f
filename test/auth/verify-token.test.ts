// Token verification against a real loopback IdP (discovery + JWKS over node:http): the attack matrix,
// audience/azp and typ policy, clock skew, JWKS caching, cool-down and key rotation without restart.
// Time is the verifier's injected clock (test/helpers/fake-clock.ts): cool-downs end when a test moves
// it, not by sleeping (one case waits 60 ms to show that real time does not count), so no case here
// depends on how fast a loaded machine runs.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import {
  calculateJwkThumbprint,
  exportJWK,
  exportSPKI,
  generateKeyPair,
  type JWK,
  type JWTPayload,
  SignJWT,
} from "jose";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { bearerChallenge, createTokenVerifier, type TokenVerifierOptions } from "../../src/auth/verify-token.js";
import { ProblemError } from "../../src/problems.js";
import { type FakeClock, fakeClock } from "../helpers/fake-clock.js";

const CLIENT = "cms-server";
const EXPLORER = "cms-explorer";
const now = () => Math.floor(Date.now() / 1000);
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

interface Key {
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  jwk: JWK;
}

async function makeKey(kid?: string): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair("RS256");
  const jwk = await exportJWK(publicKey);
  const id = kid ?? (await calculateJwkThumbprint(jwk));
  return { kid: id, privateKey, publicKey, jwk: { ...jwk, kid: id, alg: "RS256", use: "sig" } };
}

interface Idp {
  issuer: string;
  keys: JWK[];
  counts: { discovery: number; jwks: number };
  discoveryStatus: number;
  jwksStatus: number;
  announcedIssuer?: string;
  close(): Promise<void>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function startIdp(keys: JWK[]): Promise<Idp> {
  const server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.url === "/realms/CMS/.well-known/openid-configuration") {
      idp.counts.discovery++;
      return send(idp.discoveryStatus, {
        issuer: idp.announcedIssuer ?? idp.issuer,
        jwks_uri: `${idp.issuer}/protocol/openid-connect/certs`,
      });
    }
    if (req.url === "/realms/CMS/protocol/openid-connect/certs") {
      idp.counts.jwks++;
      return send(idp.jwksStatus, { keys: idp.keys });
    }
    send(404, { error: "not found" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const idp: Idp = {
    issuer: `http://127.0.0.1:${port}/realms/CMS`,
    keys,
    counts: { discovery: 0, jwks: 0 },
    discoveryStatus: 200,
    jwksStatus: 200,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  cleanups.push(idp.close);
  return idp;
}

let keyA: Key;
let keyB: Key;
let stranger: Key;
beforeAll(async () => {
  [keyA, keyB, stranger] = await Promise.all([makeKey(), makeKey(), makeKey()]);
});

function claims(idp: Idp, overrides: Record<string, unknown> = {}): JWTPayload {
  const t = now();
  const base: Record<string, unknown> = {
    iss: idp.issuer,
    sub: "user-1",
    aud: CLIENT,
    azp: EXPLORER,
    iat: t,
    exp: t + 300,
    realm_access: { roles: ["creator"] },
    ...overrides,
  };
  // An override of `undefined` removes the claim.
  return Object.fromEntries(Object.entries(base).filter(([, v]) => v !== undefined));
}

function sign(key: Key, payload: JWTPayload, header: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT(payload)
    .setProtectedHeader({ alg: "RS256", kid: key.kid, typ: "at+jwt", ...header })
    .sign(key.privateKey);
}

async function setup(
  options: Partial<TokenVerifierOptions> = {},
  keys: JWK[] = [keyA.jwk],
  time: FakeClock = fakeClock(),
) {
  const idp = await startIdp(keys);
  const verifier = createTokenVerifier({
    issuer: idp.issuer,
    clientIds: [CLIENT, EXPLORER],
    clock: time.clock,
    ...options,
  });
  return { idp, verifier, time };
}

async function failure(promise: Promise<unknown>): Promise<ProblemError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, "expected the verification to fail").toBeInstanceOf(ProblemError);
  return err as ProblemError;
}

async function rejected(promise: Promise<unknown>, description?: string): Promise<ProblemError> {
  const err = await failure(promise);
  expect(err.code).toBe("UNAUTHENTICATED");
  expect(err.status).toBe(401);
  const challenge = err.headers?.["www-authenticate"] ?? "";
  expect(challenge).toMatch(/^Bearer realm="CMS", error="invalid_token", error_description="[^"\r\n\\]*"$/);
  if (description) expect(challenge).toContain(`error_description="${description}"`);
  return err;
}

describe("createTokenVerifier: accepted tokens", () => {
  it("accepts a token whose aud contains this server's client id, from an accepted client", async () => {
    const { idp, verifier } = await setup();
    const verified = await verifier.verify(await sign(keyA, claims(idp, { aud: ["account", CLIENT], azp: EXPLORER })));
    expect(verified).toMatchObject({ sub: "user-1", iss: idp.issuer });
    expect(verifier.clientId).toBe(CLIENT);
  });

  it("accepts this server's own tokens and tokens without azp/client_id when aud names it", async () => {
    const { idp, verifier } = await setup();
    await expect(verifier.verify(await sign(keyA, claims(idp, { aud: CLIENT, azp: CLIENT })))).resolves.toBeTruthy();
    await expect(verifier.verify(await sign(keyA, claims(idp, { aud: CLIENT, azp: undefined })))).resolves.toBeTruthy();
    await expect(
      verifier.verify(await sign(keyA, claims(idp, { aud: CLIENT, azp: undefined, client_id: EXPLORER }))),
    ).resolves.toBeTruthy();
  });

  it("accepts Keycloak's typ JWT (payload typ Bearer) and application/at+jwt", async () => {
    const { idp, verifier } = await setup();
    await expect(
      verifier.verify(await sign(keyA, claims(idp, { typ: "Bearer" }), { typ: "JWT" })),
    ).resolves.toBeTruthy();
    await expect(verifier.verify(await sign(keyA, claims(idp), { typ: "application/at+jwt" }))).resolves.toBeTruthy();
  });

  it("accepts skew within the tolerance (exp just passed, nbf/iat just ahead)", async () => {
    const { idp, verifier } = await setup({ clockToleranceSec: 30 });
    const t = now();
    await expect(verifier.verify(await sign(keyA, claims(idp, { iat: t - 300, exp: t - 10 })))).resolves.toBeTruthy();
    await expect(verifier.verify(await sign(keyA, claims(idp, { nbf: t + 10, iat: t + 10 })))).resolves.toBeTruthy();
  });
});

describe("createTokenVerifier: the attack matrix (all 401 invalid_token)", () => {
  it("no token / not a compact JWS", async () => {
    const { idp, verifier } = await setup();
    await rejected(verifier.verify(""), "malformed token");
    await rejected(verifier.verify("not-a-jwt"), "malformed token");
    await rejected(verifier.verify("a.b.c.d.e"), "malformed token");
    expect(idp.counts).toEqual({ discovery: 0, jwks: 0 }); // rejected before any IdP traffic
  });

  it('alg "none" (unsecured JWT, empty signature)', async () => {
    const { idp, verifier } = await setup();
    const payload = b64(claims(idp));
    await rejected(verifier.verify(`${b64({ alg: "none" })}.${payload}.`), "signing algorithm not allowed");
    await rejected(verifier.verify(`${b64({ alg: "none", typ: "at+jwt", kid: keyA.kid })}.${payload}.`));
  });

  it("HS256 signed with the RSA public key as the HMAC secret (alg confusion)", async () => {
    const { idp, verifier } = await setup();
    const pem = new TextEncoder().encode(await exportSPKI(keyA.publicKey));
    const forged = await new SignJWT(claims(idp))
      .setProtectedHeader({ alg: "HS256", kid: keyA.kid, typ: "at+jwt" })
      .sign(pem);
    await rejected(verifier.verify(forged), "signing algorithm not allowed");
    const nBytes = new TextEncoder().encode(JSON.stringify(keyA.jwk));
    const forged2 = await new SignJWT(claims(idp)).setProtectedHeader({ alg: "HS256", typ: "at+jwt" }).sign(nBytes);
    await rejected(verifier.verify(forged2), "signing algorithm not allowed");
  });

  it("wrong issuer, and the issuer with a trailing slash", async () => {
    const { idp, verifier } = await setup();
    await rejected(
      verifier.verify(await sign(keyA, claims(idp, { iss: "http://127.0.0.1:1/realms/Other" }))),
      "unexpected issuer",
    );
    await rejected(verifier.verify(await sign(keyA, claims(idp, { iss: `${idp.issuer}/` }))), "unexpected issuer");
    await rejected(verifier.verify(await sign(keyA, claims(idp, { iss: undefined }))), "missing iss claim");
  });

  it("a token of an accepted client whose aud does not name this server (shared realm)", async () => {
    const { idp, verifier } = await setup();
    const reason = "token is not meant for this service (aud)";
    await rejected(verifier.verify(await sign(keyA, claims(idp, { aud: "account", azp: EXPLORER }))), reason);
    await rejected(verifier.verify(await sign(keyA, claims(idp, { aud: undefined, azp: CLIENT }))), reason);
  });

  it("a token naming this server in aud but issued to a client that is not accepted (azp, client_id)", async () => {
    const { idp, verifier } = await setup();
    const reason = "token was issued to a client this service does not accept (azp)";
    // Keycloak's audience resolution puts cms-server into aud of any client whose tokens carry its roles.
    await rejected(
      verifier.verify(await sign(keyA, claims(idp, { aud: [CLIENT, "account"], azp: "other-app" }))),
      reason,
    );
    await rejected(
      verifier.verify(await sign(keyA, claims(idp, { aud: CLIENT, azp: undefined, client_id: "other-app" }))),
      reason,
    );
  });

  it("wrong audience with a wrong azp (or none)", async () => {
    const { idp, verifier } = await setup();
    const reason = "token is not meant for this service (aud)";
    await rejected(verifier.verify(await sign(keyA, claims(idp, { aud: "other-api", azp: "other-client" }))), reason);
    await rejected(verifier.verify(await sign(keyA, claims(idp, { aud: ["a", "b"], azp: undefined }))), reason);
    // aud naming only the *other* configured client is not enough: aud must name this server.
    await rejected(verifier.verify(await sign(keyA, claims(idp, { aud: EXPLORER, azp: "x" }))), reason);
    await rejected(verifier.verify(await sign(keyA, claims(idp, { aud: [CLIENT, 5] }))), "malformed aud claim");
  });

  it("expired beyond the tolerance, nbf and iat in the future beyond the tolerance", async () => {
    const { idp, verifier } = await setup({ clockToleranceSec: 30 });
    const t = now();
    await rejected(verifier.verify(await sign(keyA, claims(idp, { iat: t - 600, exp: t - 60 }))), "token expired");
    await rejected(verifier.verify(await sign(keyA, claims(idp, { nbf: t + 120 }))), "token not yet valid");
    await rejected(verifier.verify(await sign(keyA, claims(idp, { iat: t + 120, exp: t + 600 }))), "bad iat claim");
  });

  it("unknown kid (a key the IdP never published)", async () => {
    const { idp, verifier } = await setup();
    await rejected(verifier.verify(await sign(stranger, claims(idp))), "unknown signing key");
  });

  it("a published kid but signed by another key", async () => {
    const { idp, verifier } = await setup();
    await rejected(verifier.verify(await sign(stranger, claims(idp), { kid: keyA.kid })), "invalid signature");
  });

  it("tampered payload", async () => {
    const { idp, verifier } = await setup();
    const [header, , signature] = (await sign(keyA, claims(idp))).split(".");
    const escalated = b64(claims(idp, { sub: "admin-user", realm_access: { roles: ["admin"] } }));
    await rejected(verifier.verify(`${header}.${escalated}.${signature}`), "invalid signature");
    await rejected(verifier.verify(`${header}.${escalated}.`), "invalid signature");
  });

  it("missing sub, exp or iat, or an empty sub", async () => {
    const { idp, verifier } = await setup();
    await rejected(verifier.verify(await sign(keyA, claims(idp, { sub: undefined }))), "missing sub claim");
    await rejected(verifier.verify(await sign(keyA, claims(idp, { exp: undefined }))), "missing exp claim");
    await rejected(verifier.verify(await sign(keyA, claims(idp, { iat: undefined }))), "missing iat claim");
    await rejected(verifier.verify(await sign(keyA, claims(idp, { sub: "" }))), "malformed sub claim");
  });

  it("tokens that are not access tokens by typ: ID/refresh tokens, id+jwt, missing typ", async () => {
    const { idp, verifier } = await setup();
    const reason = "not an access token (typ)";
    await rejected(verifier.verify(await sign(keyA, claims(idp, { typ: "ID" }), { typ: "JWT" })), reason);
    await rejected(verifier.verify(await sign(keyA, claims(idp, { typ: "Refresh" }), { typ: "JWT" })), reason);
    await rejected(verifier.verify(await sign(keyA, claims(idp), { typ: "JWT" })), reason); // JWT without Keycloak's marker
    await rejected(verifier.verify(await sign(keyA, claims(idp), { typ: "id+jwt" })), reason);
    await rejected(verifier.verify(await sign(keyA, claims(idp), { typ: "logout+jwt" })), reason);
    await rejected(verifier.verify(await sign(keyA, claims(idp), { typ: undefined })), reason);
  });

  it("a token signed by a rotated-out key once the JWKS has changed", async () => {
    const { idp, verifier, time } = await setup({ cooldownMs: 500 });
    const old = await sign(keyA, claims(idp));
    await verifier.verify(old);
    idp.keys = [keyB.jwk];
    time.advance(600);
    await verifier.verify(await sign(keyB, claims(idp))); // refetch on the unknown kid
    await rejected(verifier.verify(old), "unknown signing key");
  });
});

describe("createTokenVerifier: JWKS caching, cool-down and rotation", () => {
  it("many verifications cost one discovery and one JWKS fetch (also when concurrent)", async () => {
    const { idp, verifier } = await setup();
    const token = await sign(keyA, claims(idp));
    await Promise.all(Array.from({ length: 20 }, () => verifier.verify(token)));
    for (let i = 0; i < 30; i++) await verifier.verify(token);
    expect(idp.counts).toEqual({ discovery: 1, jwks: 1 });
  });

  it("a flood of unknown kids does not cause a fetch per token (cool-down)", async () => {
    const { idp, verifier } = await setup({ cooldownMs: 60_000 });
    await verifier.verify(await sign(keyA, claims(idp)));
    const forged = await Promise.all(
      Array.from({ length: 25 }, (_, i) => sign(stranger, claims(idp), { kid: `random-${i}` })),
    );
    for (const token of forged) await rejected(verifier.verify(token), "unknown signing key");
    expect(idp.counts.jwks).toBe(1);
  });

  it("key rotation works without restart: a new kid triggers one refetch after the floor", async () => {
    const { idp, verifier, time } = await setup({ cooldownMs: 500, refetchFloorMs: 500 });
    await verifier.verify(await sign(keyA, claims(idp)));
    idp.keys = [keyA.jwk, keyB.jwk];
    const rotated = await sign(keyB, claims(idp));
    // Within the floor the new kid is not fetched yet...
    await rejected(verifier.verify(rotated), "unknown signing key");
    expect(idp.counts.jwks).toBe(1);
    time.advance(600);
    // ...afterwards one refetch picks it up, and both keys keep working from the cache.
    await verifier.verify(rotated);
    await verifier.verify(await sign(keyA, claims(idp)));
    await verifier.verify(rotated);
    expect(idp.counts).toEqual({ discovery: 1, jwks: 2 });
  });

  it("an IdP that drops the old key at once: the new kid is fetched as soon as the short floor has passed, not the cool-down", async () => {
    const { idp, verifier, time } = await setup({ cooldownMs: 30_000, refetchFloorMs: 200 });
    await verifier.verify(await sign(keyA, claims(idp)));
    idp.keys = [keyB.jwk];
    time.advance(250);
    // Well inside the 30 s cool-down, but past the floor: one refetch at once, and the token is accepted.
    await verifier.verify(await sign(keyB, claims(idp)));
    expect(idp.counts.jwks).toBe(2);
    await rejected(verifier.verify(await sign(keyA, claims(idp))), "unknown signing key");
  });

  it("the floor still bounds refetches, and one unknown kid is not refetched again within the cool-down", async () => {
    const { idp, verifier, time } = await setup({ cooldownMs: 30_000, refetchFloorMs: 1000 });
    await verifier.verify(await sign(keyA, claims(idp)));
    // Within the floor: no refetch for a new kid.
    await rejected(verifier.verify(await sign(stranger, claims(idp), { kid: "bogus-1" })), "unknown signing key");
    expect(idp.counts.jwks).toBe(1);
    time.advance(1100);
    await rejected(verifier.verify(await sign(stranger, claims(idp), { kid: "bogus-1" })), "unknown signing key");
    expect(idp.counts.jwks).toBe(2);
    time.advance(1100);
    // The same missing kid again: already asked for within the cool-down, so the IdP is not asked again…
    await rejected(verifier.verify(await sign(stranger, claims(idp), { kid: "bogus-1" })), "unknown signing key");
    expect(idp.counts.jwks).toBe(2);
    // … while a kid never seen before is (the floor has passed).
    idp.keys = [keyA.jwk, keyB.jwk];
    await verifier.verify(await sign(keyB, claims(idp)));
    expect(idp.counts.jwks).toBe(3);
  });

  it("an IdP that reuses a kid for a new key is picked up after the cool-down", async () => {
    const reused = await makeKey("fixed");
    const replacement = await makeKey("fixed");
    const { idp, verifier, time } = await setup({ cooldownMs: 500 }, [reused.jwk]);
    await verifier.verify(await sign(reused, claims(idp)));
    idp.keys = [replacement.jwk];
    const fresh = await sign(replacement, claims(idp));
    await rejected(verifier.verify(fresh), "invalid signature"); // cooling down: no refetch
    expect(idp.counts.jwks).toBe(1);
    time.advance(600);
    await verifier.verify(fresh);
    expect(idp.counts.jwks).toBe(2);
  });

  it("an explicit jwksUrl skips discovery; all traffic goes through the injected fetch", async () => {
    const idp = await startIdp([keyA.jwk]);
    const seen: string[] = [];
    const fetchSpy: typeof fetch = (input, init) => {
      seen.push(String(input));
      return fetch(input, init);
    };
    const verifier = createTokenVerifier({
      issuer: idp.issuer,
      clientIds: [CLIENT],
      jwksUrl: `${idp.issuer}/protocol/openid-connect/certs`,
      fetch: fetchSpy,
    });
    await verifier.verify(await sign(keyA, claims(idp, { azp: CLIENT })));
    expect(idp.counts).toEqual({ discovery: 0, jwks: 1 });
    expect(seen).toEqual([`${idp.issuer}/protocol/openid-connect/certs`]);
  });
});

describe("createTokenVerifier: time is the injected clock's, not the machine's", () => {
  const HOUR = 3600;

  it("judges exp by the injected clock: a token valid by the machine's clock is expired by it", async () => {
    const { idp, verifier } = await setup({ clockToleranceSec: 30 }, [keyA.jwk], fakeClock(Date.now() + HOUR * 1000));
    await rejected(verifier.verify(await sign(keyA, claims(idp))), "token expired"); // exp = machine now + 300 s
  });

  it("judges nbf and iat by the injected clock: a token from the machine's future is valid at that time", async () => {
    const { idp, verifier } = await setup({ clockToleranceSec: 30 }, [keyA.jwk], fakeClock(Date.now() + HOUR * 1000));
    const t = now() + HOUR;
    await expect(verifier.verify(await sign(keyA, claims(idp, { iat: t, exp: t + 300 })))).resolves.toBeTruthy(); // our iat rule
    await expect(
      verifier.verify(await sign(keyA, claims(idp, { nbf: t, iat: t, exp: t + 300 }))),
    ).resolves.toBeTruthy(); // jose's nbf
  });

  it("a cool-down ends when the injected clock moves, not when real time passes", async () => {
    const { idp, verifier, time } = await setup({ cooldownMs: 20, refetchFloorMs: 20 });
    await verifier.verify(await sign(keyA, claims(idp)));
    idp.keys = [keyA.jwk, keyB.jwk];
    const rotated = await sign(keyB, claims(idp));
    // The one real wait in this file: the machine's clock passes the floor, the verifier's stands still.
    await new Promise((resolve) => setTimeout(resolve, 60));
    await rejected(verifier.verify(rotated), "unknown signing key");
    expect(idp.counts.jwks).toBe(1);
    time.advance(20);
    await verifier.verify(rotated);
    expect(idp.counts.jwks).toBe(2);
  });

  it("the cached JWKS is refreshed once the injected clock passes cacheMaxAgeMs, and not before", async () => {
    const { idp, verifier, time } = await setup({ cacheMaxAgeMs: 60_000 });
    const token = await sign(keyA, claims(idp));
    await verifier.verify(token);
    time.advance(59_999);
    await verifier.verify(token);
    expect(idp.counts.jwks).toBe(1);
    time.advance(1);
    await verifier.verify(token);
    expect(idp.counts).toEqual({ discovery: 1, jwks: 2 });
  });
});

describe("createTokenVerifier: IdP trouble is 503, not 401", () => {
  it("discovery unreachable → UNAVAILABLE, then recovers without restart", async () => {
    const { idp, verifier, time } = await setup({ cooldownMs: 500 });
    idp.discoveryStatus = 500;
    const token = await sign(keyA, claims(idp));
    const err = await failure(verifier.verify(token));
    expect(err.code).toBe("UNAVAILABLE");
    expect(err.status).toBe(503);
    expect(err.headers?.["www-authenticate"]).toBeUndefined();
    // Failed discovery is not retried per request...
    await failure(verifier.verify(token));
    expect(idp.counts.discovery).toBe(1);
    // ...but is after the retry delay.
    idp.discoveryStatus = 200;
    time.advance(600);
    await verifier.verify(token);
    expect(idp.counts.discovery).toBe(2);
  });

  it("a closed port, a failing JWKS endpoint, or a discovery document naming another issuer → UNAVAILABLE", async () => {
    const down = await startIdp([keyA.jwk]);
    const token = await sign(keyA, claims(down));
    await down.close();
    const closed = createTokenVerifier({ issuer: down.issuer, clientIds: [CLIENT] });
    expect((await failure(closed.verify(token))).code).toBe("UNAVAILABLE");

    const { idp, verifier } = await setup();
    idp.jwksStatus = 503;
    expect((await failure(verifier.verify(await sign(keyA, claims(idp))))).code).toBe("UNAVAILABLE");

    const other = await setup();
    other.idp.announcedIssuer = `${other.idp.issuer}/`;
    expect((await failure(other.verifier.verify(await sign(keyA, claims(other.idp))))).code).toBe("UNAVAILABLE");
  });

  it("a configured issuer with a trailing slash must match the discovery document exactly", async () => {
    const idp = await startIdp([keyA.jwk]);
    const verifier = createTokenVerifier({ issuer: `${idp.issuer}/`, clientIds: [CLIENT] });
    const err = await failure(verifier.verify(await sign(keyA, claims(idp, { iss: `${idp.issuer}/` }))));
    expect(err.code).toBe("UNAVAILABLE"); // discovery says issuer without the slash
    expect(idp.counts.discovery).toBe(1); // the well-known URL is built without a double slash
  });
});

describe("createTokenVerifier: configuration", () => {
  it("refuses symmetric/none algorithms, bad tolerance, no client ids, a bad issuer", () => {
    const base = { issuer: "https://idp.example/realms/CMS", clientIds: [CLIENT] };
    expect(() => createTokenVerifier({ ...base, algorithms: ["HS256"] })).toThrow(TypeError);
    expect(() => createTokenVerifier({ ...base, algorithms: ["RS256", "none"] })).toThrow(TypeError);
    expect(() => createTokenVerifier({ ...base, algorithms: [] })).toThrow(TypeError);
    expect(() => createTokenVerifier({ ...base, clockToleranceSec: 61 })).toThrow(RangeError);
    expect(() => createTokenVerifier({ ...base, clockToleranceSec: -1 })).toThrow(RangeError);
    expect(() => createTokenVerifier({ ...base, clientIds: [] })).toThrow(TypeError);
    expect(() => createTokenVerifier({ ...base, issuer: "idp.example" })).toThrow(TypeError);
    expect(() => createTokenVerifier({ ...base, issuer: "https://idp.example/?realm=x" })).toThrow(TypeError);
    expect(() => createTokenVerifier({ ...base, jwksUrl: "not a url" })).toThrow(TypeError);
    expect(() => createTokenVerifier({ ...base, algorithms: ["ES256", "EdDSA"] })).not.toThrow();
  });

  it("error_description is sanitised (no quotes, backslashes, CR/LF)", () => {
    expect(bearerChallenge("invalid_token", 'bad "x"\r\nSet-Cookie: a\\b')).toBe(
      'Bearer realm="CMS", error="invalid_token", error_description="bad xSet-Cookie: ab"',
    );
    expect(bearerChallenge()).toBe('Bearer realm="CMS"');
  });
});

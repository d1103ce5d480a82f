// Signing keys for the dev IdP: RS256, kid = RFC 7638 JWK thumbprint.
// A thumbprint kid changes with the key, so verifiers' JWKS caches refetch after a restart or rotation.
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from "jose";

export type SigningJwk = JWK & { kid: string; alg: "RS256"; use: "sig" };

/** Returns a private RSA JWK ready for oidc-provider's `jwks`; generates one when none is given. */
export async function createSigningKey(privateJwk?: JWK): Promise<SigningJwk> {
  let jwk = privateJwk;
  if (!jwk) {
    const { privateKey } = await generateKeyPair("RS256", { extractable: true });
    jwk = await exportJWK(privateKey);
  }
  if (jwk.kty !== "RSA" || !jwk.d) throw new Error("signingKey must be a private RSA JWK");
  // Thumbprint covers only the public members, so it is the same for the public JWKS entry.
  const kid = await calculateJwkThumbprint(jwk, "sha256");
  return { ...jwk, kid, alg: "RS256", use: "sig" };
}

export function publicJwk(jwk: SigningJwk): JWK {
  const { kty, n, e, kid, alg, use } = jwk;
  return { kty, n, e, kid, alg, use };
}

/**
 * Bearer access-token verification (RFC 8725 BCP, RFC 9068 profile) with jose: issuer discovery,
 * a cached JWKS refetched on unknown keys, and one mapping from every failure to a problem.
 */
import {
  errors as joseErrors,
  type JWTPayload,
  type JWTVerifyGetKey,
  jwtVerify,
  type ProtectedHeaderParameters,
} from "jose";
import { ProblemError } from "../problems.js";
import { type ClockedJwks, createClockedJwks } from "./clocked-jwks.js";

export const BEARER_REALM = "CMS";

/** Asymmetric signatures only (RFC 8725 §3.1): never `none`, never HMAC (a public key is not a secret). */
export const ASYMMETRIC_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
] as const;
const ALLOWED = new Set<string>([...ASYMMETRIC_ALGORITHMS, "Ed25519"]);

export const MAX_CLOCK_TOLERANCE_SEC = 60;

export interface TokenVerifierOptions {
  /** Exact issuer (`iss`); also the discovery base. No normalisation: a trailing slash is a different issuer. */
  issuer: string;
  /**
   * The first is this server's own client id, which `aud` must name; a token's `azp` (or `client_id`),
   * when present, must be one of them all.
   */
  clientIds: string[];
  /** Explicit JWKS URL; skips discovery. */
  jwksUrl?: string;
  fetch?: typeof fetch;
  /** Leeway for exp/nbf/iat in seconds; default 30, at most 60. */
  clockToleranceSec?: number;
  /**
   * The time every decision is taken at: exp/nbf/iat (passed to jose as `currentDate`), the JWKS
   * cache age, floor and cool-downs, the discovery retry delay. AppDeps["clock"]; default the real time.
   */
  clock?: () => Date;
  /**
   * Minimum time before the same unknown kid, or a bad signature under a known kid, causes another
   * JWKS refetch; default 30 s.
   */
  cooldownMs?: number;
  /** Minimum time between any two JWKS fetches: a kid never seen before refetches once this has passed; default 5 s. */
  refetchFloorMs?: number;
  /** Cached JWKS is refreshed after this age even without an unknown kid; default 10 min. */
  cacheMaxAgeMs?: number;
  /** Timeout of each discovery/JWKS request; default 5 s. */
  timeoutMs?: number;
  algorithms?: readonly string[];
}

/** Claims guaranteed present and well-typed after `verify`. */
export type VerifiedClaims = JWTPayload & { iss: string; sub: string; exp: number; iat: number; azp?: string };

export interface TokenVerifier {
  readonly clientId: string;
  verify(token: string): Promise<VerifiedClaims>;
}

// ---- RFC 6750 §3 challenges ----

/** error_description may only hold %x20-21 / %x23-5B / %x5D-7E (RFC 6750 §3): no quotes, backslashes, CR/LF. */
const sanitise = (text: string) => text.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, "").slice(0, 200);

/** `Bearer realm="CMS"[, error="…", error_description="…"]`; without an error when no credentials came (§3.1). */
export function bearerChallenge(
  error?: "invalid_request" | "invalid_token" | "insufficient_scope",
  description?: string,
): string {
  let challenge = `Bearer realm="${BEARER_REALM}"`;
  if (error) challenge += `, error="${error}"`;
  if (error && description) challenge += `, error_description="${sanitise(description)}"`;
  return challenge;
}

/** 401 `invalid_token`: expired, revoked, malformed or otherwise invalid (RFC 6750 §3.1). */
export const invalidToken = (reason: string, cause?: unknown) =>
  new ProblemError("UNAUTHENTICATED", `invalid access token: ${reason}`, {
    headers: { "www-authenticate": bearerChallenge("invalid_token", reason) },
    cause,
  });

/** 403 `insufficient_scope`: the token is fine but lacks the privileges (RFC 6750 §3.1). */
export const insufficientScope = (reason: string) =>
  new ProblemError("FORBIDDEN", reason, {
    headers: { "www-authenticate": bearerChallenge("insufficient_scope", reason) },
  });

// ---- the key source (discovery + JWKS) ----

/** The IdP could not be asked for keys: not the caller's fault, so 503 and never 401. */
class KeySourceUnavailable extends Error {
  constructor(reason: string, options?: { cause?: unknown }) {
    super(reason, options);
    this.name = "KeySourceUnavailable";
  }
}

// Failures of the key lookup that say something about the token itself (its kid/alg), not the IdP.
const KEY_SELECTION_CODES = new Set([
  "ERR_JWKS_NO_MATCHING_KEY",
  "ERR_JWKS_MULTIPLE_MATCHING_KEYS",
  "ERR_JOSE_NOT_SUPPORTED",
]);
const joseCode = (err: unknown): string | undefined =>
  err instanceof Error && "code" in err && typeof err.code === "string" ? err.code : undefined;

async function fetchJson(fetchImpl: typeof fetch, url: string, timeoutMs: number): Promise<unknown> {
  const res = await fetchImpl(url, {
    headers: { accept: "application/json" },
    redirect: "manual",
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (res.status !== 200) throw new Error(`HTTP ${res.status} from ${url}`);
  return res.json();
}

function parseIssuer(issuer: string): URL {
  const url = URL.canParse(issuer) ? new URL(issuer) : null;
  // RFC 8414 §2: an https (here also http, for development) URL without query or fragment.
  if (!url || !/^https?:$/.test(url.protocol) || url.search || url.hash || issuer.includes("#")) {
    throw new TypeError(`issuer must be an absolute http(s) URL without query or fragment: ${issuer}`);
  }
  return url;
}

/** OpenID Connect Discovery 1.0 §4: `<issuer minus trailing slash>/.well-known/openid-configuration`; §4.3 exact issuer. */
async function discoverJwksUrl(
  issuer: string,
  issuerUrl: URL,
  fetchImpl: typeof fetch,
  timeoutMs: number,
): Promise<URL> {
  const doc = await fetchJson(fetchImpl, `${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`, timeoutMs);
  if (typeof doc !== "object" || doc === null) throw new Error("discovery document is not a JSON object");
  const { issuer: announced, jwks_uri: jwksUri } = doc as Record<string, unknown>;
  if (announced !== issuer) throw new Error(`discovery document names issuer ${String(announced)}`);
  if (typeof jwksUri !== "string" || !URL.canParse(jwksUri))
    throw new Error("discovery document has no valid jwks_uri");
  const url = new URL(jwksUri);
  // No downgrade: an https issuer must publish its keys over https.
  if (!/^https?:$/.test(url.protocol) || (issuerUrl.protocol === "https:" && url.protocol !== "https:")) {
    throw new Error(`refusing jwks_uri ${jwksUri}`);
  }
  return url;
}

// ---- the verifier ----

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
/** RFC 9068 §2.1 wants `at+jwt`; Keycloak (through 26.x) sends `JWT` and marks access tokens with `typ: "Bearer"` in the payload. */
const AT_JWT_TYPES = new Set(["at+jwt", "application/at+jwt"]);

export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  const { issuer, clientIds } = options;
  const issuerUrl = parseIssuer(issuer);
  const [clientId] = clientIds;
  if (clientId === undefined || clientIds.some((id) => typeof id !== "string" || id.length === 0)) {
    throw new TypeError("clientIds must list at least one non-empty client id");
  }
  const ownClientId: string = clientId;
  const tolerance = options.clockToleranceSec ?? 30;
  if (!(tolerance >= 0 && tolerance <= MAX_CLOCK_TOLERANCE_SEC)) {
    throw new RangeError(`clockToleranceSec must be between 0 and ${MAX_CLOCK_TOLERANCE_SEC}`);
  }
  const algorithms = [...(options.algorithms ?? ASYMMETRIC_ALGORITHMS)];
  const refused = algorithms.filter((alg) => !ALLOWED.has(alg));
  if (algorithms.length === 0 || refused.length > 0) {
    throw new TypeError(
      `only asymmetric JWS algorithms may be allowed (refused: ${refused.join(", ") || "empty list"})`,
    );
  }
  const jwksUrl = options.jwksUrl === undefined ? undefined : new URL(options.jwksUrl); // bad URL: fail at start-up
  const fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
  const timeoutMs = options.timeoutMs ?? 5_000;
  const cooldownMs = options.cooldownMs ?? 30_000;
  const refetchFloorMs = Math.min(options.refetchFloorMs ?? 5_000, cooldownMs);
  // Failed discovery is retried, but not more often than this (a down IdP is not hammered per request).
  const discoveryRetryMs = Math.min(cooldownMs, 5_000);
  const clock = options.clock ?? (() => new Date());
  const nowMs = () => clock().getTime();

  let jwks: ClockedJwks | undefined;
  let pending: Promise<ClockedJwks> | undefined;
  let failedAt = Number.NEGATIVE_INFINITY;
  let lastFailure: unknown;

  const makeJwks = (url: URL) =>
    createClockedJwks(url, {
      now: nowMs,
      // An unknown kid refetches once this has passed since the last fetch: the IdP may have
      // dropped the old key at once, so waiting the whole cool-down would refuse every new token.
      refetchFloorMs,
      cacheMaxAgeMs: options.cacheMaxAgeMs ?? 600_000,
      timeoutMs,
      fetch: fetchImpl,
    });

  /** The JWKS resolver, created once discovery succeeded; concurrent callers share one discovery. */
  async function keySet(): Promise<ClockedJwks> {
    if (jwks) return jwks;
    if (jwksUrl) return (jwks = makeJwks(jwksUrl));
    if (nowMs() - failedAt < discoveryRetryMs) {
      throw new KeySourceUnavailable("identity provider discovery failed recently", { cause: lastFailure });
    }
    pending ??= discoverJwksUrl(issuer, issuerUrl, fetchImpl, timeoutMs)
      .then((url) => (jwks = makeJwks(url)))
      .catch((err: unknown) => {
        failedAt = nowMs();
        lastFailure = err;
        throw new KeySourceUnavailable("identity provider discovery failed", { cause: err });
      })
      .finally(() => {
        pending = undefined;
      });
    return pending;
  }

  // Kids a refetch did not find, and when: the same forged kid repeated must not refetch every floor.
  const missingKids = new Map<string, number>();
  const recentlyMissing = (set: ClockedJwks, kid: string | undefined) => {
    const since = kid === undefined ? undefined : missingKids.get(kid);
    if (since === undefined || nowMs() - since >= cooldownMs) return false;
    return !set.jwks()?.keys.some((key) => key.kid === kid); // another refetch may have brought it since
  };
  const rememberMissing = (kid: string) => {
    missingKids.delete(kid);
    missingKids.set(kid, nowMs());
    if (missingKids.size > 1000) missingKids.delete(missingKids.keys().next().value as string); // oldest first
  };

  const getKey: JWTVerifyGetKey = async (header, token) => {
    const set = await keySet();
    if (recentlyMissing(set, header.kid)) throw new joseErrors.JWKSNoMatchingKey();
    const mayRefetch = !set.coolingDown; // an unknown kid refetches only past the floor
    try {
      return await set(header, token);
    } catch (err) {
      if (mayRefetch && joseCode(err) === "ERR_JWKS_NO_MATCHING_KEY" && header.kid !== undefined)
        rememberMissing(header.kid);
      if (KEY_SELECTION_CODES.has(joseCode(err) ?? "")) throw err;
      // Network error, timeout, non-200, unparsable or malformed JWKS: the IdP, not the token.
      throw new KeySourceUnavailable("identity provider keys could not be fetched", { cause: err });
    }
  };

  const verifyOnce = (token: string) =>
    jwtVerify(token, getKey, {
      issuer, // exact string comparison (RFC 9068 §4 step 3)
      algorithms,
      clockTolerance: tolerance,
      currentDate: clock(),
      requiredClaims: ["iss", "sub", "exp", "iat"], // RFC 9068 §2.2; jti and client_id stay optional (Keycloak)
    });

  let signatureReloadAt = Number.NEGATIVE_INFINITY;

  async function verify(token: string): Promise<VerifiedClaims> {
    if (!COMPACT_JWS.test(token)) throw invalidToken("malformed token");
    let result: Awaited<ReturnType<typeof verifyOnce>>;
    try {
      try {
        result = await verifyOnce(token);
      } catch (err) {
        // An IdP restarted with a new key under the same kid: the key set only refetches on unknown kids, so
        // refetch once on a bad signature too, at most once per cool-down (with jose 6.2 a dev IdP
        // restarted with a new key under its old kid was refused until the verifier restarted).
        if (
          joseCode(err) !== "ERR_JWS_SIGNATURE_VERIFICATION_FAILED" ||
          !jwks ||
          jwks.coolingDown ||
          nowMs() - signatureReloadAt < cooldownMs
        ) {
          throw err;
        }
        signatureReloadAt = nowMs();
        await jwks.reload().catch(() => {
          throw err; // the IdP is unreachable: report the bad signature, not the refetch
        });
        result = await verifyOnce(token);
      }
    } catch (err) {
      throw toProblem(err);
    }
    checkProfile(result.protectedHeader, result.payload);
    return result.payload as VerifiedClaims;
  }

  /** RFC 9068 §4 checks jose cannot express: explicit typing, claim types, audience and authorised party. */
  function checkProfile(header: ProtectedHeaderParameters, payload: JWTPayload): void {
    const typ = typeof header.typ === "string" ? header.typ.toLowerCase() : undefined;
    // Explicit typing (RFC 8725 §3.11): `at+jwt`, or Keycloak's `JWT` with payload typ "Bearer" (its ID
    // and refresh tokens say "ID"/"Refresh"); anything else (id+jwt, logout+jwt, missing) is refused.
    const keycloakAccess = typ === "jwt" && typeof payload.typ === "string" && payload.typ.toLowerCase() === "bearer";
    if (!(typ && AT_JWT_TYPES.has(typ)) && !keycloakAccess) throw invalidToken("not an access token (typ)");
    if (typeof payload.sub !== "string" || payload.sub.length === 0) throw invalidToken("malformed sub claim");
    if (typeof payload.iat !== "number" || payload.iat > nowMs() / 1000 + tolerance)
      throw invalidToken("bad iat claim");
    const aud = payload.aud;
    const audiences = typeof aud === "string" ? [aud] : Array.isArray(aud) ? aud : aud === undefined ? [] : null;
    if (audiences === null || !audiences.every((a) => typeof a === "string")) throw invalidToken("malformed aud claim");
    // RFC 9068 §4 step 4: aud must name this service, whoever the token was issued to.
    if (!audiences.includes(ownClientId)) throw invalidToken("token is not meant for this service (aud)");
    // Keycloak's audience resolution adds cms-server to aud for any client of the realm whose tokens
    // carry its roles, so the authorised party must be a client this service accepts as well.
    const { azp, client_id: issuedTo } = payload;
    if (azp !== undefined && typeof azp !== "string") throw invalidToken("malformed azp claim");
    if (issuedTo !== undefined && typeof issuedTo !== "string") throw invalidToken("malformed client_id claim");
    const party = azp ?? issuedTo;
    if (party !== undefined && !clientIds.includes(party)) {
      throw invalidToken("token was issued to a client this service does not accept (azp)");
    }
  }

  return { clientId: ownClientId, verify };
}

/** The one place where a verification failure becomes a problem: 401 invalid_token, or 503 when the IdP is down. */
export function toProblem(err: unknown): ProblemError {
  if (err instanceof ProblemError) return err;
  if (err instanceof KeySourceUnavailable) {
    return new ProblemError("UNAVAILABLE", `cannot verify access tokens right now: ${err.message}`, {
      headers: { "retry-after": "5" },
      cause: err,
    });
  }
  const code = joseCode(err);
  const claim = err instanceof Error && "claim" in err && typeof err.claim === "string" ? err.claim : "";
  const reason = err instanceof Error && "reason" in err && typeof err.reason === "string" ? err.reason : "";
  switch (code) {
    case "ERR_JWT_EXPIRED":
      return invalidToken("token expired", err);
    case "ERR_JWT_CLAIM_VALIDATION_FAILED":
      if (reason === "missing") return invalidToken(`missing ${claim} claim`, err);
      if (claim === "iss") return invalidToken("unexpected issuer", err);
      if (claim === "nbf") return invalidToken("token not yet valid", err);
      return invalidToken(`invalid ${claim || "claim"}`, err);
    case "ERR_JOSE_ALG_NOT_ALLOWED":
      return invalidToken("signing algorithm not allowed", err);
    case "ERR_JWS_SIGNATURE_VERIFICATION_FAILED":
      return invalidToken("invalid signature", err);
    case "ERR_JWKS_NO_MATCHING_KEY":
      return invalidToken("unknown signing key", err);
    case "ERR_JWKS_MULTIPLE_MATCHING_KEYS":
      return invalidToken("ambiguous signing key", err);
    case "ERR_JOSE_NOT_SUPPORTED":
      return invalidToken("unsupported token", err);
    default:
      // ERR_JWS_INVALID, ERR_JWT_INVALID, unknown errors: fail closed.
      return invalidToken("malformed token", err);
  }
}

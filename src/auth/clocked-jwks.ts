/**
 * A remote JWKS whose refetch decisions follow an injected clock. jose's RemoteJWKSet times its
 * cache and cool-down with Date.now() and takes no clock, so here it only fetches and parses: both of
 * its timers are set to never expire, and this wrapper calls `reload()` when the clock says so.
 */
import {
  createRemoteJWKSet,
  customFetch,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWSHeaderParameters,
} from "jose";

export interface ClockedJwksOptions {
  /** Epoch milliseconds; the verifier's clock. */
  now: () => number;
  /** An unknown kid refetches once this has passed since the last fetch. */
  refetchFloorMs: number;
  /** The cached set is refetched after this age even without an unknown kid. */
  cacheMaxAgeMs: number;
  timeoutMs: number;
  fetch: typeof fetch;
}

export interface ClockedJwks {
  (header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<CryptoKey>;
  /** True while the last fetch is younger than the refetch floor. */
  readonly coolingDown: boolean;
  reload(): Promise<void>;
  /** The cached set; undefined before the first fetch. */
  jwks(): JSONWebKeySet | undefined;
}

const isNoMatchingKey = (err: unknown) =>
  err instanceof Error && "code" in err && err.code === "ERR_JWKS_NO_MATCHING_KEY";

export function createClockedJwks(url: URL, options: ClockedJwksOptions): ClockedJwks {
  const { now, refetchFloorMs, cacheMaxAgeMs } = options;
  const remote = createRemoteJWKSet(url, {
    cooldownDuration: Number.POSITIVE_INFINITY, // never refetches on its own: see getKey below
    cacheMaxAge: Number.POSITIVE_INFINITY,
    timeoutDuration: options.timeoutMs,
    [customFetch]: options.fetch,
  });
  let fetchedAt = Number.NEGATIVE_INFINITY; // only a successful fetch counts: after a failure the next call retries
  const age = () => now() - fetchedAt;
  const reload = async () => {
    await remote.reload(); // concurrent callers share jose's one pending fetch
    fetchedAt = now();
  };

  const getKey = async (header: JWSHeaderParameters, token: FlattenedJWSInput) => {
    if (age() >= cacheMaxAgeMs) await reload();
    try {
      return await remote(header, token);
    } catch (err) {
      if (!isNoMatchingKey(err) || age() < refetchFloorMs) throw err;
      await reload();
      return remote(header, token);
    }
  };
  return Object.defineProperties(getKey, {
    coolingDown: { get: () => age() < refetchFloorMs },
    reload: { value: reload },
    jwks: { value: () => remote.jwks() },
  }) as ClockedJwks;
}

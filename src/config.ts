/**
 * Service configuration: one zod schema with every default the README promises, parsed once from a
 * plain record by the entry point. Nothing below the entry points reads the environment.
 */
import { z } from "zod";
import type { AppOptions } from "./app-deps.js";
import { BUILT_IN_PRESETS, ImagePresetsSchema } from "./images/params.js";

const boolean = (fallback: boolean) =>
  z
    .enum(["true", "false", "1", "0", "yes", "no"], { message: "must be true or false" })
    .default(fallback ? "true" : "false")
    .transform((v) => v === "true" || v === "1" || v === "yes");

const integer = (fallback: number, min: number, max: number) =>
  z.coerce
    .number({ message: "must be a number" })
    .int({ message: "must be an integer" })
    .min(min, { message: `must be at least ${min}` })
    .max(max, { message: `must be at most ${max}` })
    .default(fallback);

export const GiB = 1024 ** 3;
export const DEFAULT_DB_BUSY_TIMEOUT_MS = 5_000;

/** Per-tenant quota limits; 0 (or absent in an override) means none / the default. */
/** A setting holding JSON that `schema` validates; the error shows `example`. Absent → `{}`. */
const json = <T extends z.ZodType<object>>(schema: T, example: string) =>
  z
    .string()
    .transform((value, ctx) => {
      let parsedJson: unknown;
      try {
        parsedJson = JSON.parse(value);
      } catch {
        parsedJson = undefined;
      }
      const parsed = schema.safeParse(parsedJson);
      if (parsed.success) return parsed.data as z.output<T>;
      ctx.addIssue({
        code: "custom",
        message: `must be JSON like ${example}: ${parsed.error.issues[0]?.message ?? "not JSON"}`,
      });
      return z.NEVER;
    })
    .default(() => ({}) as never); // absent: no overrides, no presets

const QuotaLimit = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
export const QuotaOverridesSchema = z.record(
  z.string().regex(/^[A-Za-z0-9._~-]{1,64}$/, { message: "tenant ids are 1-64 of A-Z a-z 0-9 . _ ~ -" }),
  z.object({ bytes: QuotaLimit, resources: QuotaLimit, ingressBytesPerDay: QuotaLimit }).partial().strict(),
);
export type QuotaOverrides = z.infer<typeof QuotaOverridesSchema>;

export const ConfigSchema = z
  .object({
    CMS_PORT: integer(9082, 0, 65535),
    CMS_HOST: z.string().min(1).default("127.0.0.1"),
    /** Folder where blobs are written; created if missing and checked for writability at start-up. */
    CMS_VOLUME: z.string().min(1).default("./data/volume"),
    /** Where blobs live: `fs` (CMS_VOLUME, one machine) or `s3` (an S3-compatible bucket several instances share). */
    CMS_STORAGE: z.enum(["fs", "s3"], { message: "must be fs or s3" }).default("fs"),
    /** S3 API base URL, e.g. https://s3.eu-west-1.amazonaws.com or https://<account>.r2.cloudflarestorage.com. */
    CMS_S3_ENDPOINT: z.url({ message: "must be an absolute URL" }).optional(),
    CMS_S3_BUCKET: z.string().min(1).optional(),
    /** SigV4 region; the driver's default is `auto` for R2 endpoints, else `us-east-1`. */
    CMS_S3_REGION: z.string().min(1).optional(),
    CMS_S3_ACCESS_KEY_ID: z.string().min(1).optional(),
    CMS_S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
    /** Key prefix inside the bucket (empty, or ending in `/`), so one bucket can hold several stores. */
    CMS_S3_PREFIX: z.string().optional(),
    /**
     * Workers on R2: an R2 API token's S3 access key pair, the account's S3 endpoint
     * (https://<account>.r2.cloudflarestorage.com) and the bucket's name, for presigned URLs
     * (docs/direct-storage.md). Without them uploads by URL go through the Worker, direct reads are off.
     */
    CMS_R2_ACCESS_KEY_ID: z.string().min(1).optional(),
    CMS_R2_SECRET_ACCESS_KEY: z.string().min(1).optional(),
    CMS_R2_S3_ENDPOINT: z.url({ message: "must be an absolute URL" }).optional(),
    CMS_R2_BUCKET: z.string().min(1).optional(),
    /**
     * This deployment's id (`select id from deployment`), to let it take a blob store that holds
     * blobs but no owner marker (services/store-owner.ts); logged. Remove it once started.
     */
    CMS_STORE_TAKEOVER: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, { message: "must be a deployment id (select id from deployment)" })
      .optional(),
    CMS_DATABASE_URL: z
      .string()
      .regex(/^(file:|libsql:|https?:|wss?:|:memory:$)/, {
        message: "must be a libSQL URL (file:, :memory:, libsql://, http(s)://, ws(s)://)",
      })
      .default("file:./data/cms.db"),
    CMS_DATABASE_AUTH_TOKEN: z.string().optional(),
    /**
     * A read replica of CMS_DATABASE_URL (same token): getData's lookups and revision reads go to it,
     * falling back to the primary on a miss or an error; everything else uses the primary.
     */
    CMS_DATABASE_READ_URL: z
      .string()
      .regex(/^(file:|libsql:|https?:|wss?:)/, {
        message: "must be a libSQL URL (file:, libsql://, http(s)://, ws(s)://)",
      })
      .optional(),
    /**
     * How long a write to a local database file waits for SQLite's write lock (held by another process
     * or instance sharing the file) before answering 503 DATABASE_BUSY. The wait never blocks reads.
     */
    CMS_DB_BUSY_TIMEOUT_MS: integer(DEFAULT_DB_BUSY_TIMEOUT_MS, 0, 600_000),
    CMS_MAX_RESOURCE_BYTES: integer(GiB, 1, Number.MAX_SAFE_INTEGER),
    /**
     * Largest decoded `resourceBinary` (base64 in JSON) on create/update. JSON is parsed in memory, so
     * keep this small and send large files with the streaming multipart upload instead.
     */
    CMS_MAX_INLINE_BYTES: integer(4 * 1024 * 1024, 1, 64 * 1024 * 1024),
    /** Lifetime of a lock in seconds when the client asks for none, and what renew extends it by. */
    CMS_LOCK_TTL: integer(30 * 60, 1, 24 * 3600),
    /** Longest lifetime a client may request for a lock, in seconds. */
    CMS_LOCK_MAX_TTL: integer(8 * 3600, 1, 7 * 24 * 3600),
    /**
     * Seconds a resumable (tus) upload stays resumable after its last PATCH (`Upload-Expires`); then it
     * is gone and its stored parts are collected.
     */
    CMS_TUS_EXPIRY_SECONDS: integer(24 * 3600, 1, 30 * 24 * 3600),
    /** Lifetime of a createUploadURL URL in seconds (docs/direct-storage.md); S3's presigned maximum is 7 days. */
    CMS_UPLOAD_URL_TTL_SECONDS: integer(3600, 1, 604_800),
    /** getData of content at least this large answers 307 to a presigned GET on the bucket (S3/R2); 0 = off. */
    CMS_DIRECT_READ_MIN_BYTES: integer(0, 0, Number.MAX_SAFE_INTEGER),
    /** Most unfinished (unexpired) tus uploads a tenant may have at once (0 = none): each holds a row and its parts. */
    CMS_TUS_MAX_PENDING_PER_TENANT: integer(100, 0, 1_000_000),
    /** Default per-tenant limits (0 = none): bytes stored (per reference), top-level resources, bytes taken in per UTC day. */
    CMS_QUOTA_BYTES: integer(0, 0, Number.MAX_SAFE_INTEGER),
    CMS_QUOTA_RESOURCES: integer(0, 0, Number.MAX_SAFE_INTEGER),
    CMS_QUOTA_INGRESS_BYTES_PER_DAY: integer(0, 0, Number.MAX_SAFE_INTEGER),
    /** Per-tenant overrides, JSON: `{"acme": {"bytes": 1073741824, "resources": 0}}` (0 = none for that tenant). */
    CMS_QUOTA_OVERRIDES: json(QuotaOverridesSchema, '{"tenant":{"bytes":N,"resources":N,"ingressBytesPerDay":N}}'),
    /** Named image transforms for getData `?preset=` (JSON: {"thumb":{"width":64,"height":64,"fit":"cover","format":"webp"}}). */
    CMS_IMAGE_PRESETS: json(ImagePresetsSchema, '{"thumb":{"width":64,"height":64,"fit":"cover","format":"webp"}}'),
    /** Accept only `?preset=` image transforms (a public deployment bounds the work it does). */
    CMS_IMAGE_PRESETS_ONLY: boolean(false),
    /** Largest width or height of an image derivative. */
    CMS_IMAGE_MAX_DIMENSION: integer(6000, 1, 16_383),
    /**
     * Largest source image (width × height, read from its header, an AVIF's from its AV1 data, before
     * decoding) that is transformed; and the largest derivative `enlarge=true` may make.
     */
    CMS_IMAGE_MAX_PIXELS: integer(50_000_000, 1, 1_000_000_000),
    /** Transforms running at once (0: the number of cores); more wait in short per-caller queues, shared fairly, then 503. */
    CMS_IMAGE_CONCURRENCY: integer(0, 0, 1024),
    /** Seconds one transform may take before it is abandoned (503 with Retry-After). */
    CMS_IMAGE_TIMEOUT_SECONDS: integer(30, 1, 3600),
    /** Bytes the derivative cache may hold in the blob store (least recently used go first). */
    CMS_IMAGE_CACHE_BYTES: integer(GiB, 0, Number.MAX_SAFE_INTEGER),
    /** Node/Bun: load the image library a second after start-up, not at the first image request. */
    CMS_IMAGE_WARMUP: boolean(true),
    /** Most entries (files and folders) a zip package may list. */
    CMS_ZIP_MAX_ENTRIES: integer(10_000, 1, 1_000_000),
    /** Most bytes all files of a zip package may expand to together. */
    CMS_ZIP_MAX_BYTES: integer(GiB, 1, Number.MAX_SAFE_INTEGER),
    /** Highest expansion ratio (uncompressed/compressed) of a package and of each file in it. */
    CMS_ZIP_MAX_RATIO: integer(100, 1, 100_000),
    /** Memory for an LRU of small blobs served without touching storage (0 = off). */
    CMS_BLOB_CACHE_BYTES: integer(64 * 1024 * 1024, 0, Number.MAX_SAFE_INTEGER),
    /** Only blobs up to this size enter that cache. */
    CMS_BLOB_CACHE_ENTRY_BYTES: integer(64 * 1024, 1, 16 * 1024 * 1024),
    /**
     * Node processes serving the port (node:cluster; runtime/host/workers.ts): a number, or `auto` for
     * the cores available. Resolved to a count by the Node runtime; Bun refuses more than 1.
     */
    CMS_WORKERS: z
      .union(
        [
          z.literal("auto"),
          z.coerce
            .number()
            .int()
            .min(1, { message: "must be at least 1" })
            .max(256, { message: "must be at most 256" }),
        ],
        { message: "must be auto or a whole number from 1 to 256" },
      )
      .default(1),
    /** getData rows (found or not) kept in memory on Node/Bun with a local database file (0 = off); dropped on any commit. */
    CMS_ROW_CACHE_ROWS: integer(10_000, 0, 10_000_000),
    /**
     * Remote databases only: how long (ms) a cached getData row may be served without asking the
     * database again — the bound on seeing another instance's change or delete (0 = no row cache).
     */
    CMS_ROW_CACHE_TTL_MS: integer(1_000, 0, 60_000),
    /**
     * Node/Bun fast path, fs volume: reads of an open blob file up to this size run on the event loop
     * (one pread, as nginx does) instead of the thread pool; 0 = always the thread pool.
     */
    CMS_FS_SYNC_READ_BYTES: integer(64 * 1024, 0, 1024 * 1024),
    /**
     * How long a create's reservation of a blob protects it (seconds): longer than any create takes
     * from its upload being stored to its row being written. Crash leftovers are deleted after it.
     */
    CMS_GC_GRACE_SECONDS: integer(900, 1, 7 * 24 * 3600),
    /** Seconds between blob collection passes (Node/Bun; the Worker collects on its cron trigger). */
    CMS_GC_INTERVAL_SECONDS: integer(60, 1, 24 * 3600),
    /** Total time allowed for one external fetch, body included. */
    CMS_FETCH_TIMEOUT_MS: integer(60_000, 100, 3_600_000),
    /** Allow external URIs resolving to loopback/private addresses (development and tests only). */
    CMS_FETCH_ALLOW_PRIVATE: boolean(false),
    /** Time allowed for one webhook delivery (connect, request, answer headers). */
    CMS_WEBHOOK_TIMEOUT_MS: integer(10_000, 100, 600_000),
    /** Attempts of one delivery before it is `failed` (then retried only through the API). */
    CMS_WEBHOOK_MAX_ATTEMPTS: integer(8, 1, 100),
    /** First retry delay; each further one doubles, with jitter. */
    CMS_WEBHOOK_RETRY_BASE_MS: integer(1_000, 1, 86_400_000),
    /** Longest retry delay: the doubling stops here (jitter still spreads retries below it). */
    CMS_WEBHOOK_RETRY_MAX_MS: integer(3_600_000, 1, 7 * 86_400_000),
    /** Node/Bun: time between looks at the outbox for due deliveries. */
    CMS_WEBHOOK_POLL_MS: integer(1_000, 10, 3_600_000),
    /** When true, every API request needs a bearer access token from CMS_AUTH_ISSUER. */
    CMS_AUTH_ENABLED: boolean(false),
    /** Exact issuer of access tokens, e.g. http://127.0.0.1:8080/auth/realms/CMS (discovery base). */
    CMS_AUTH_ISSUER: z.url({ message: "must be an absolute URL" }).optional(),
    /** This server's client id at the IdP: expected in `aud`, and the key of `resource_access` roles. */
    CMS_AUTH_CLIENT_ID: z.string().min(1).default("cms-server"),
    /** Further clients whose tokens (`azp`) are accepted, comma-separated; the explorer's is one. */
    CMS_AUTH_CLIENTS: z
      .string()
      .default("cms-explorer")
      .transform((s) =>
        s
          .split(",")
          .map((c) => c.trim())
          .filter(Boolean),
      ),
    /** Public client the API explorer logs in with (authorization code + PKCE). */
    CMS_AUTH_EXPLORER_CLIENT_ID: z.string().min(1).default("cms-explorer"),
    /** JWKS URL; by default taken from the issuer's discovery document. */
    CMS_AUTH_JWKS_URL: z.url({ message: "must be an absolute URL" }).optional(),
    /** Minimum time before the same unknown key id (or a bad signature under a known one) refetches the JWKS again. */
    CMS_AUTH_JWKS_COOLDOWN_MS: integer(30_000, 0, 3_600_000),
    /** Minimum time between any two JWKS fetches: a key id never seen before refetches once this has passed (rotation). */
    CMS_AUTH_JWKS_REFETCH_FLOOR_MS: integer(5_000, 0, 60_000),
    /** Count `realm_access.roles` as well as this client's roles (opt-in: realm roles are shared by every client of a realm). */
    CMS_AUTH_REALM_ROLES: boolean(false),
    /** Claim listing the tenants a token is confined to (a string or a list). */
    CMS_AUTH_TENANT_CLAIM: z.string().min(1).default("tenants"),
    /** HMAC key for signed getData links (≥ 32 characters). Random per process when unset. */
    CMS_LINK_SECRET: z.string().min(32, { message: "must be at least 32 characters" }).optional(),
    /** With auth on, leave getData readable without a token (content URLs are unguessable). */
    CMS_PUBLIC_READ: boolean(false),
    /** Seconds a public mutable getData URL stays fresh in caches (0: revalidate with the ETag each time). */
    CMS_CACHE_MAX_AGE: integer(0, 0, 31_536_000),
    /** Seconds a cache may serve a stale public mutable URL while it refetches (with CMS_CACHE_MAX_AGE). */
    CMS_CACHE_STALE_WHILE_REVALIDATE: integer(0, 0, 31_536_000),
    /**
     * Origin used in absolute URLs the service hands out (signed links); never the request's Host.
     * Node/Bun on a loopback address with a fixed port default to their own URL (withLoopbackPublicUrl).
     */
    CMS_PUBLIC_URL: z.url({ message: "must be an absolute URL" }).optional(),
    /**
     * A second origin (another hostname for this same server) from which user content is rendered.
     * Set, active content (HTML, SVG, XML) asked for on any other host is sent as an attachment, and
     * signed links point here: the way GitHub serves user content from githubusercontent.com.
     */
    CMS_CONTENT_ORIGIN: z
      .string()
      .transform((value, ctx) => {
        const url = URL.canParse(value) ? new URL(value) : null;
        const bare =
          url &&
          /^https?:$/.test(url.protocol) &&
          !url.username &&
          !url.password &&
          url.pathname === "/" &&
          !url.search &&
          !url.hash;
        if (bare && !/[?#]/.test(value)) return url.origin;
        ctx.addIssue({
          code: "custom",
          message: "must be an http(s) origin only, e.g. https://content.example.org (no path, query or credentials)",
        });
        return z.NEVER;
      })
      .optional(),
    CMS_LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
    /** Node/Bun: serve GET /metrics (Prometheus text format). Off by default: it tells how the service is used. */
    CMS_METRICS_ENABLED: boolean(false),
    /** When set, GET /metrics needs `Authorization: Bearer <this>` (compared in constant time). */
    CMS_METRICS_TOKEN: z.string().min(16, { message: "must be at least 16 characters" }).optional(),
    /** On every log line (`instance`) and in `cms_instance_info`; default host name and process id (Node/Bun). */
    CMS_INSTANCE_ID: z
      .string()
      .regex(/^[A-Za-z0-9._:@-]{1,128}$/, { message: "must be 1-128 of A-Z a-z 0-9 . _ : @ -" })
      .optional(),
  })
  .superRefine((c, ctx) => {
    if (c.CMS_STORAGE !== "s3") return;
    for (const key of [
      "CMS_S3_ENDPOINT",
      "CMS_S3_BUCKET",
      "CMS_S3_ACCESS_KEY_ID",
      "CMS_S3_SECRET_ACCESS_KEY",
    ] as const) {
      if (!c[key]) ctx.addIssue({ code: "custom", path: [key], message: "is required when CMS_STORAGE=s3" });
    }
  })
  // Narrowed, not only checked: with auth on the type itself has an issuer (no `as string` downstream).
  .transform((c, ctx) => {
    if (!c.CMS_AUTH_ENABLED) return { ...c, CMS_AUTH_ENABLED: false as const };
    if (c.CMS_AUTH_ISSUER) return { ...c, CMS_AUTH_ENABLED: true as const, CMS_AUTH_ISSUER: c.CMS_AUTH_ISSUER };
    ctx.addIssue({ code: "custom", path: ["CMS_AUTH_ISSUER"], message: "is required when CMS_AUTH_ENABLED=true" });
    return z.NEVER;
  });

export type Config = z.infer<typeof ConfigSchema>;

export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`invalid configuration: ${issues.join("; ")}`);
    this.name = "ConfigError";
  }
}

/** Parses a plain record (e.g. `process.env`); throws `ConfigError` naming every bad setting. */
export function parseConfig(source: Record<string, string | undefined>): Config {
  // Empty strings count as unset, as in most twelve-factor tooling.
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = ConfigSchema.safeParse(cleaned);
  if (parsed.success) return parsed.data;
  throw new ConfigError(
    parsed.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? "config");
      const value = source[key];
      // Never echo secrets; other values help the operator see the typo.
      const shown = value === undefined || /TOKEN|SECRET|PASSWORD/.test(key) ? "" : ` (got "${value}")`;
      return `${key} ${issue.message}${shown}`;
    }),
  );
}

const LOOPBACK_HOST = /^(?:127(?:\.\d{1,3}){3}|::1|localhost)$/i;

/**
 * A server bound to a loopback address on a fixed port (the embedded default, 127.0.0.1:9082) knows
 * the only URL it can be reached at, so CMS_PUBLIC_URL may default to it. Anywhere else the public
 * origin is unknown and must be configured: it is never taken from a request's Host header.
 */
export function withLoopbackPublicUrl(config: Config): Config {
  if (config.CMS_PUBLIC_URL || config.CMS_PORT === 0 || !LOOPBACK_HOST.test(config.CMS_HOST)) return config;
  const host = config.CMS_HOST.includes(":") ? `[${config.CMS_HOST}]` : config.CMS_HOST;
  return { ...config, CMS_PUBLIC_URL: `http://${host}:${config.CMS_PORT}` };
}

/**
 * The settings createApp and the services take, as typed options: built once by the composition
 * root (runtime/app-deps.ts) from the parsed configuration. Environment names end here.
 */
export function appOptions(config: Config): AppOptions {
  return {
    auth: config.CMS_AUTH_ENABLED
      ? {
          issuer: config.CMS_AUTH_ISSUER,
          clientIds: [config.CMS_AUTH_CLIENT_ID, ...config.CMS_AUTH_CLIENTS],
          jwksUrl: config.CMS_AUTH_JWKS_URL,
          jwksCooldownMs: config.CMS_AUTH_JWKS_COOLDOWN_MS,
          jwksRefetchFloorMs: config.CMS_AUTH_JWKS_REFETCH_FLOOR_MS,
          tenantClaim: config.CMS_AUTH_TENANT_CLAIM,
          realmRoles: config.CMS_AUTH_REALM_ROLES,
          publicRead: config.CMS_PUBLIC_READ,
          explorerClientId: config.CMS_AUTH_EXPLORER_CLIENT_ID,
        }
      : null,
    limits: {
      maxResourceBytes: config.CMS_MAX_RESOURCE_BYTES,
      maxInlineBytes: config.CMS_MAX_INLINE_BYTES,
      zip: {
        maxEntries: config.CMS_ZIP_MAX_ENTRIES,
        maxTotalUncompressed: config.CMS_ZIP_MAX_BYTES,
        maxCompressionRatio: config.CMS_ZIP_MAX_RATIO,
      },
    },
    locks: { ttlMs: config.CMS_LOCK_TTL * 1000, maxTtlMs: config.CMS_LOCK_MAX_TTL * 1000 },
    tus: { expiryMs: config.CMS_TUS_EXPIRY_SECONDS * 1000, maxPendingPerTenant: config.CMS_TUS_MAX_PENDING_PER_TENANT },
    direct: { uploadUrlTtlSeconds: config.CMS_UPLOAD_URL_TTL_SECONDS, readMinBytes: config.CMS_DIRECT_READ_MIN_BYTES },
    quotas: {
      defaults: {
        bytes: config.CMS_QUOTA_BYTES,
        resources: config.CMS_QUOTA_RESOURCES,
        ingressBytesPerDay: config.CMS_QUOTA_INGRESS_BYTES_PER_DAY,
      },
      overrides: config.CMS_QUOTA_OVERRIDES,
    },
    collector: { graceMs: config.CMS_GC_GRACE_SECONDS * 1000, intervalMs: config.CMS_GC_INTERVAL_SECONDS * 1000 },
    fetch: { allowPrivate: config.CMS_FETCH_ALLOW_PRIVATE, totalTimeoutMs: config.CMS_FETCH_TIMEOUT_MS },
    webhooks: {
      allowPrivate: config.CMS_FETCH_ALLOW_PRIVATE,
      timeoutMs: config.CMS_WEBHOOK_TIMEOUT_MS,
      maxAttempts: config.CMS_WEBHOOK_MAX_ATTEMPTS,
      retryBaseMs: config.CMS_WEBHOOK_RETRY_BASE_MS,
      retryMaxMs: config.CMS_WEBHOOK_RETRY_MAX_MS,
      pollMs: config.CMS_WEBHOOK_POLL_MS,
    },
    publicUrl: config.CMS_PUBLIC_URL,
    contentOrigin: config.CMS_CONTENT_ORIGIN,
    cache: { maxAge: config.CMS_CACHE_MAX_AGE, staleWhileRevalidate: config.CMS_CACHE_STALE_WHILE_REVALIDATE },
    images: {
      presets: { ...BUILT_IN_PRESETS, ...config.CMS_IMAGE_PRESETS },
      presetsOnly: config.CMS_IMAGE_PRESETS_ONLY,
      maxDimension: config.CMS_IMAGE_MAX_DIMENSION,
      maxPixels: config.CMS_IMAGE_MAX_PIXELS,
      concurrency: config.CMS_IMAGE_CONCURRENCY,
      timeoutSeconds: config.CMS_IMAGE_TIMEOUT_SECONDS,
      cacheBytes: config.CMS_IMAGE_CACHE_BYTES,
    },
  };
}

/** Settings added with their validation: each bad value is refused with a message naming it. */
import { describe, expect, it } from "vitest";
import { appOptions, ConfigError, GiB, parseConfig } from "../src/config.js";

const issuesOf = (env: Record<string, string>) => {
  try {
    parseConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  return [];
};

/** One test per value: refused with exactly one issue, which names the setting. */
const refusesNamingIt = (setting: string, values: string[]) =>
  it.each(values)(`refuses %s, naming ${setting}`, (value) => {
    const issues = issuesOf({ [setting]: value });
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(new RegExp(`^${setting} `));
  });

describe("CMS_CONTENT_ORIGIN", () => {
  it("is optional, and kept as a bare origin", () => {
    expect(parseConfig({}).CMS_CONTENT_ORIGIN).toBeUndefined();
    expect(parseConfig({ CMS_CONTENT_ORIGIN: "https://Content.Example.org/" }).CMS_CONTENT_ORIGIN).toBe(
      "https://content.example.org",
    );
    expect(parseConfig({ CMS_CONTENT_ORIGIN: "http://127.0.0.1:9083" }).CMS_CONTENT_ORIGIN).toBe(
      "http://127.0.0.1:9083",
    );
  });

  refusesNamingIt("CMS_CONTENT_ORIGIN", [
    "content.example.org",
    "ftp://content.example.org",
    "https://content.example.org/cms",
    "https://u:p@content.example.org",
    "https://content.example.org?x=1",
  ]);
});

describe("CMS_ROW_CACHE_ROWS", () => {
  it("defaults to 10 000 rows; 0 switches the cache off", () => {
    expect(parseConfig({}).CMS_ROW_CACHE_ROWS).toBe(10_000);
    expect(parseConfig({ CMS_ROW_CACHE_ROWS: "0" }).CMS_ROW_CACHE_ROWS).toBe(0);
  });

  refusesNamingIt("CMS_ROW_CACHE_ROWS", ["-1", "1.5", "many"]);
});

describe("CMS_ROW_CACHE_TTL_MS", () => {
  it("defaults to 1 s; 0 switches the remote database's row cache off", () => {
    expect(parseConfig({}).CMS_ROW_CACHE_TTL_MS).toBe(1_000);
    expect(parseConfig({ CMS_ROW_CACHE_TTL_MS: "0" }).CMS_ROW_CACHE_TTL_MS).toBe(0);
  });

  refusesNamingIt("CMS_ROW_CACHE_TTL_MS", ["-1", "60001", "soon"]);
});

describe("CMS_DATABASE_READ_URL", () => {
  it("is optional; takes a libSQL URL", () => {
    expect(parseConfig({}).CMS_DATABASE_READ_URL).toBeUndefined();
    expect(parseConfig({ CMS_DATABASE_READ_URL: "libsql://replica.example.org" }).CMS_DATABASE_READ_URL).toBe(
      "libsql://replica.example.org",
    );
  });

  refusesNamingIt("CMS_DATABASE_READ_URL", ["postgres://db", ":memory:", "replica.example.org"]);
});

describe("CMS_WORKERS", () => {
  it("defaults to 1; takes a count or auto", () => {
    expect(parseConfig({}).CMS_WORKERS).toBe(1);
    expect(parseConfig({ CMS_WORKERS: "4" }).CMS_WORKERS).toBe(4);
    expect(parseConfig({ CMS_WORKERS: "auto" }).CMS_WORKERS).toBe("auto");
  });

  refusesNamingIt("CMS_WORKERS", ["0", "-2", "2.5", "all", "257"]);
});

describe("typed options (appOptions): the environment parsed once, no variable names past it", () => {
  const ISSUER = "http://127.0.0.1:8080/auth/realms/CMS";

  it("auth off: no auth options at all", () => {
    expect(appOptions(parseConfig({})).auth).toBeNull();
    expect(appOptions(parseConfig({ CMS_AUTH_ISSUER: ISSUER })).auth).toBeNull();
  });

  it("auth on: the validated config is narrowed to one with an issuer, and the options carry it", () => {
    const config = parseConfig({
      CMS_AUTH_ENABLED: "true",
      CMS_AUTH_ISSUER: ISSUER,
      CMS_AUTH_CLIENTS: "a, b",
      CMS_PUBLIC_READ: "yes",
    });
    if (!config.CMS_AUTH_ENABLED) throw new Error("auth is on");
    const issuer: string = config.CMS_AUTH_ISSUER; // no `as string`: the type says it is there
    expect(issuer).toBe(ISSUER);
    expect(appOptions(config).auth).toEqual({
      issuer: ISSUER,
      clientIds: ["cms-server", "a", "b"],
      jwksUrl: undefined,
      jwksCooldownMs: 30_000,
      jwksRefetchFloorMs: 5_000,
      tenantClaim: "tenants",
      realmRoles: false,
      publicRead: true,
      explorerClientId: "cms-explorer",
    });
  });

  it("auth on without an issuer is a ConfigError naming CMS_AUTH_ISSUER, and only it", () => {
    expect(issuesOf({ CMS_AUTH_ENABLED: "true" })).toEqual(["CMS_AUTH_ISSUER is required when CMS_AUTH_ENABLED=true"]);
  });

  it("durations become milliseconds, limits and quotas their own objects", () => {
    const options = appOptions(
      parseConfig({
        CMS_GC_GRACE_SECONDS: "10",
        CMS_GC_INTERVAL_SECONDS: "3",
        CMS_LOCK_TTL: "60",
        CMS_QUOTA_BYTES: "5",
        CMS_QUOTA_OVERRIDES: '{"acme":{"resources":2}}',
      }),
    );
    expect(options.collector).toEqual({ graceMs: 10_000, intervalMs: 3_000 });
    expect(options.locks).toEqual({ ttlMs: 60_000, maxTtlMs: 8 * 3600 * 1000 });
    expect(options.quotas).toEqual({
      defaults: { bytes: 5, resources: 0, ingressBytesPerDay: 0 },
      overrides: { acme: { resources: 2 } },
    });
    expect(options.limits.zip).toEqual({ maxEntries: 10_000, maxTotalUncompressed: GiB, maxCompressionRatio: 100 });
    expect(JSON.stringify(options)).not.toMatch(/CMS_/);
  });

  it("invalid values still fail at parsing, naming the variable, before any options exist", () => {
    expect(issuesOf({ CMS_GC_GRACE_SECONDS: "soon" })).toEqual([
      expect.stringMatching(/^CMS_GC_GRACE_SECONDS must be a number/),
    ]);
  });
});

describe("CMS_IMAGE_PRESETS", () => {
  it("adds to the built-in `preview` preset (the library's display-size previews) and may redefine it", () => {
    const preview = { width: 1024, height: 1024, fit: "inside", format: "webp" };
    expect(appOptions(parseConfig({})).images?.presets).toEqual({ preview });
    const thumb = { width: 64, height: 64, fit: "cover", format: "webp" };
    const own = { preview: { width: 600 }, thumb };
    expect(appOptions(parseConfig({ CMS_IMAGE_PRESETS: JSON.stringify(own) })).images?.presets).toEqual(own);
  });
});

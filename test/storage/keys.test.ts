// Key rules: what parseBlobKey refuses, and that content keys are deterministic and tenant-blind.
import { describe, expect, it } from "vitest";
import { StorageError } from "../../src/storage/blob-store.js";
import {
  MAX_KEY_LENGTH,
  contentKey,
  contentKeyUnder,
  isSha256Hex,
  parseBlobKey,
  parseKeyPrefix,
  tenantPrefix,
} from "../../src/storage/keys.js";

const SHA = "ab".repeat(32);
const OTHER_SHA = "cd".repeat(32);

function invalidKey(fn: () => unknown): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(StorageError);
  expect((caught as StorageError).code).toBe("INVALID_KEY");
}

describe("parseBlobKey", () => {
  it.each(["a", "a/b/c", "t/0123/ab/cd/file.bin", "A-Z_0.9", "x.", "a/b-c/d_e.f"])("accepts %j", (raw) => {
    expect(parseBlobKey(raw)).toBe(raw);
  });

  it.each([
    ["empty", ""],
    ["traversal", "../etc/passwd"],
    ["traversal inside", "a/../../b"],
    ["dot segment", "a/./b"],
    ["dot-dot at end", "a/.."],
    ["hidden / reserved segment", ".tmp/x"],
    ["absolute", "/etc/passwd"],
    ["trailing slash", "a/b/"],
    ["empty segment", "a//b"],
    ["backslash", "a\\b"],
    ["windows traversal", "..\\..\\x"],
    ["NUL", "a\u0000b"],
    ["newline", "a\nb"],
    ["tab", "a\tb"],
    ["DEL", "a\u007fb"],
    ["space", "a b"],
    ["percent-encoding", "a%2F..%2Fb"],
    ["colon", "c:/x"],
    ["unicode letter", "caf\u00e9"],
    ["unicode slash look-alike", "a\u2215b"],
    ["fullwidth dot", "\uff0e\uff0e/x"],
    ["emoji", "\u{1f600}"],
  ])("rejects %s", (_label, raw) => {
    invalidKey(() => parseBlobKey(raw));
  });

  it("caps the length", () => {
    const segment = "a".repeat(100);
    const atLimit = [segment, segment, segment, segment, "b".repeat(MAX_KEY_LENGTH - 404)].join("/");
    expect(atLimit).toHaveLength(MAX_KEY_LENGTH);
    expect(parseBlobKey(atLimit)).toBe(atLimit);
    invalidKey(() => parseBlobKey(`${atLimit}c`));
    invalidKey(() => parseBlobKey("a".repeat(256))); // one segment beyond NAME_MAX
  });

  it("error messages escape control characters", () => {
    expect(() => parseBlobKey("a\u0000\nb")).toThrow(/"a\\u0000\\nb"/);
  });
});

describe("parseKeyPrefix", () => {
  it.each(["", "t/", "t/ab", "a/b/c/"])("accepts %j", (raw) => {
    expect(parseKeyPrefix(raw)).toBe(raw);
  });
  it.each(["/", "../", "a//", "/a", ".tmp/", "a\\"])("rejects %j", (raw) => {
    invalidKey(() => parseKeyPrefix(raw));
  });
});

describe("content keys", () => {
  it("are deterministic and fan out by hash", async () => {
    const key = await contentKey("tenant-1", SHA);
    expect(await contentKey("tenant-1", SHA)).toBe(key);
    expect(key).toMatch(/^t\/[0-9a-f]{32}\/ab\/ab\/(ab){32}$/);
    expect(parseBlobKey(key)).toBe(key);
  });

  it("separate tenants", async () => {
    const a = await contentKey("tenant-1", SHA);
    const b = await contentKey("tenant-2", SHA);
    expect(a).not.toBe(b);
    expect(a.startsWith(await tenantPrefix("tenant-1"))).toBe(true);
    expect(b.startsWith(await tenantPrefix("tenant-1"))).toBe(false);
    expect(await contentKey("tenant-1", OTHER_SHA)).not.toBe(a);
  });

  it("never contain tenant text, even hostile tenant ids", async () => {
    for (const tenant of [
      "../../etc",
      "/abs",
      "a\\b",
      "x\u0000y",
      "tenant with spaces",
      "caf\u00e9",
      "T".repeat(10_000),
    ]) {
      const key = await contentKey(tenant, SHA);
      expect(key).toMatch(/^t\/[0-9a-f]{32}\/ab\/ab\/(ab){32}$/);
      if (tenant.length > 3) expect(key).not.toContain(tenant);
    }
  });

  it("tenant prefix is the first 128 bits of SHA-256(tenant id)", async () => {
    // sha256("abc") = ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
    expect(await tenantPrefix("abc")).toBe("t/ba7816bf8f01cfea414140de5dae2223/");
  });

  it("reject empty or malformed tenant ids and non-hex digests", async () => {
    await expect(tenantPrefix("")).rejects.toMatchObject({ code: "INVALID_KEY" });
    // Lone surrogates would all encode to U+FFFD and collide.
    await expect(tenantPrefix("a\ud800")).rejects.toMatchObject({ code: "INVALID_KEY" });
    await expect(tenantPrefix("\u{1f600}")).resolves.toMatch(/^t\/[0-9a-f]{32}\/$/);
    await expect(contentKey("t", SHA.toUpperCase())).rejects.toMatchObject({ code: "INVALID_KEY" });
    await expect(contentKey("t", "../../x")).rejects.toMatchObject({ code: "INVALID_KEY" });
    await expect(contentKey("t", SHA.slice(1))).rejects.toMatchObject({ code: "INVALID_KEY" });
  });

  it("contentKeyUnder only accepts prefixes from tenantPrefix", async () => {
    const prefix = await tenantPrefix("tenant-1");
    expect(contentKeyUnder(prefix, SHA)).toBe(await contentKey("tenant-1", SHA));
    invalidKey(() => contentKeyUnder("../", SHA));
    invalidKey(() => contentKeyUnder("t/tenant-1/", SHA));
  });

  it("isSha256Hex", () => {
    expect(isSha256Hex(SHA)).toBe(true);
    expect(isSha256Hex(SHA.toUpperCase())).toBe(false);
    expect(isSha256Hex(`${SHA}0`)).toBe(false);
  });
});
